package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The server's handler on each TCP connection a listening {@link RdmaTransport} accepts (the
 * client's is {@link ClientHandshake}). The first frame decides: an RDMA hello makes it an RDMA
 * connection (this TCP connection then only watches liveness); anything else makes it a plain TCP
 * connection served by the acceptor's handler, which gets every frame from then on. Runs on the TCP
 * I/O thread.
 */
final class ServerHandshake implements FrameHandler {
    // RdmaTransport's logger, whose inner class this was: the same logging settings apply
    private static final System.Logger LOG = System.getLogger(RdmaTransport.class.getName());

    private final RdmaTransport transport;
    private final Connection tcpConnection;
    private final int maxFrameLength;
    private final Acceptor acceptor;
    private FrameHandler tcpHandler;
    private volatile RdmaConnection rdma;
    private boolean helloSeen;
    /** Refused before its first frame (a connection limit): told in the form the first frame asks for. */
    private ResourceExhaustedException refusedEarly;
    /** What this connection's hello claimed of its address's share, released when it closes; 0 for none. */
    private long claimed;

    ServerHandshake(RdmaTransport transport, Connection tcpConnection, int maxFrameLength, Acceptor acceptor) {
        this.transport = transport;
        this.tcpConnection = tcpConnection;
        this.maxFrameLength = maxFrameLength;
        this.acceptor = acceptor;
    }

    @Override
    public void onFrame(Connection c, MemorySegment buffer, long offset, int length) {
        if (tcpHandler != null) {
            tcpHandler.onFrame(c, buffer, offset, length);
            return;
        }
        if (helloSeen) {
            LOG.log(System.Logger.Level.WARNING, "closing connection from {0}: a frame on the TCP side of an RDMA connection",
                    c.remoteAddress());
            c.close(new ProtocolException("a frame on the TCP connection of an RDMA connection"));
            return;
        }
        if (FrameHeader.type(buffer, offset) != FrameDescriptor.TYPE_RDMA_HELLO) {
            transport.metrics().tcpFallbackConnections.increment();
            tcpHandler = acceptor.accept(c);
            if (refusedEarly != null) {
                tcpHandler.onRefused(c, refusedEarly); // a plain TCP client: a connection-level error
                return;
            }
            tcpHandler.onFrame(c, buffer, offset, length);
            return;
        }
        onHello(c, buffer, offset, length);
    }

    /** The client's hello, its first frame: refuse it, or set up its RDMA connection and answer. */
    private void onHello(Connection c, MemorySegment buffer, long offset, int length) {
        helloSeen = true;
        if (refusedEarly != null) {
            refuse(Hello.REFUSED_EXHAUSTED, refusedEarly.getMessage());
            return;
        }
        Hello peer = new Hello();
        try {
            peer.decode(buffer, offset, length);
        } catch (Hello.HelloException e) {
            refuse(Hello.REFUSED_MALFORMED, "bad RDMA hello: " + e.getMessage());
            return;
        }
        String full = transport.poolRefusal("server");
        if (full != null) {
            RdmaEvents.poolPressure("connection refused", String.valueOf(c.remoteAddress()), transport.bytesInUse(),
                    transport.rdmaConfig().poolHighWaterMark(), transport.rdmaConfig().bufferPool().maxPooledBytes());
            refuse(Hello.REFUSED_EXHAUSTED, full);
            return;
        }
        long need = transport.bytesPerConnection();
        String overShare = transport.addressShares().claim(c.remoteAddress().getAddress(), need);
        if (overShare != null) {
            refuse(Hello.REFUSED_EXHAUSTED, overShare);
            return;
        }
        claimed = need;
        RdmaConnection conn;
        Hello mine = new Hello();
        try {
            conn = transport.newConnection(c, maxFrameLength, true);
        } catch (IOException e) {
            refuse(e instanceof ResourceExhaustedException ? Hello.REFUSED_EXHAUSTED : Hello.REFUSED_SETUP_FAILED,
                    "the server cannot set up RDMA: " + e.getMessage());
            return;
        }
        try {
            conn.prepareHello(mine);
            conn.connect(peer);
        } catch (IOException | RuntimeException e) {
            conn.abandon();
            refuse(Hello.REFUSED_SETUP_FAILED, "the server cannot set up RDMA: " + e.getMessage());
            return;
        }
        rdma = conn;
        acceptOnLoop(conn, mine);
    }

    /**
     * On {@code conn}'s I/O thread: hands it to the acceptor, attaches it with the handler the
     * acceptor gives, and sends this side's hello; or abandons it when the hello channel closed
     * meanwhile or the acceptor failed.
     */
    private void acceptOnLoop(RdmaConnection conn, Hello mine) {
        RdmaLoop loop = conn.loop();
        loop.execute(() -> {
            if (!tcpConnection.isOpen()) {
                conn.abandonOnLoop();
                return;
            }
            FrameHandler h;
            try {
                h = acceptor.accept(conn);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "could not set up accepted RDMA connection " + conn, e);
                conn.abandonOnLoop();
                tcpConnection.close(e);
                return;
            }
            loop.attach(conn, h);
            if (!RdmaTransport.sendHello(tcpConnection, mine)) {
                conn.closeNow(new IOException("could not send the RDMA hello"));
                return;
            }
            LOG.log(System.Logger.Level.DEBUG, "accepted RDMA connection {0}", conn);
        });
    }

    private void refuse(int status, String reason) {
        transport.metrics().connectionsRefused.increment();
        LOG.log(System.Logger.Level.WARNING, "refusing RDMA connection from {0}: {1}", tcpConnection.remoteAddress(), reason);
        int len = Hello.refusalLength(reason);
        long at = tcpConnection.claim(len);
        if (at >= 0) {
            Hello.encodeRefusal(tcpConnection.claimBuffer(), at, status, reason);
            tcpConnection.commit();
        }
        tcpConnection.close(null);
    }

    @Override
    public void onTick(Connection c, long nowNanos) {
        if (tcpHandler != null) {
            tcpHandler.onTick(c, nowNanos);
        }
    }

    /** A TCP client's handler decides; for an RDMA connection, only its handshake is timed here. */
    @Override
    public boolean hasTimedWork() {
        return tcpHandler != null ? tcpHandler.hasTimedWork() : rdma == null;
    }

    @Override
    public void onRefused(Connection c, IOException cause) {
        if (tcpHandler != null) {
            tcpHandler.onRefused(c, cause); // a plain TCP client: the server explains
        } else if (!helloSeen && refusedEarly == null && cause instanceof ResourceExhaustedException limit) {
            // Over a connection limit before a frame came: an RDMA client is told in a refusing
            // hello, a TCP client in a connection-level error, so wait for its first frame (the
            // frame-read and idle timeouts still close one that sends nothing).
            refusedEarly = limit;
        } else if (!helloSeen && (cause instanceof PeerRefusedException || cause instanceof ProtocolException)) {
            // Before any frame: the TLS check of clients refused it, or a client without TLS came to
            // this TLS server (or its first header is bad). Told in a connection-level error, which a
            // TCP client and an RDMA client's handshake both read.
            tcpHandler = acceptor.accept(c);
            tcpHandler.onRefused(c, cause);
        } else {
            c.close(cause);
        }
    }

    /**
     * A plain TCP connection's calls; the TCP side of an RDMA connection carries nothing after the
     * hello, so it counts as busy: the TCP idle timeout must not close it (and the RDMA connection
     * with it). The RDMA connection's idleness is its own timers' ({@link RdmaTimers}). Before the
     * hello it counts as idle: a connection that sends no first frame is closed after the idle
     * timeout ({@link TimeoutSettings#idle}), as a TCP one is.
     */
    @Override
    public int callsInFlight() {
        if (tcpHandler != null) {
            return tcpHandler.callsInFlight();
        }
        return helloSeen ? 1 : 0;
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        if (tcpHandler != null) {
            tcpHandler.onClose(c, cause);
        }
        if (claimed > 0) {
            transport.addressShares().release(c.remoteAddress().getAddress(), claimed);
            claimed = 0;
        }
        RdmaConnection r = rdma;
        if (r != null) {
            r.peerLost(cause);
        }
    }
}
