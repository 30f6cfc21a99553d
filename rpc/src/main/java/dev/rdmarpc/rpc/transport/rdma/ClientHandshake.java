package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.frame.ConnectionErrors;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The client's handler on the TCP connection of an RDMA connection: receives the server's hello
 * ({@link #reply}), then watches the TCP connection's liveness (its close means the peer is gone,
 * {@link RdmaConnection#peerLost}). Its frame handling runs on the TCP I/O thread; the connecting thread
 * waits for the reply ({@link #awaitHello}) and hands the connection to its RDMA I/O thread ({@link #attach}).
 */
final class ClientHandshake implements FrameHandler {
    final CompletableFuture<Hello> reply = new CompletableFuture<>();
    volatile RdmaConnection rdma;
    /**
     * Whether {@link #rdma} is attached to its I/O thread ({@link #attached}). Until then the
     * connecting thread owns it (it sets up its queue pair): a close then only fails {@link #reply},
     * and the connecting thread gives the connection up; closing it from here would destroy the
     * queue pair under the set-up.
     */
    private volatile boolean attached;
    /** The RDMA connection's {@link dev.rdmarpc.rpc.transport.loop.IdleFrameTimers#ticksHeard} when {@link #heardElsewhere} last asked (its I/O thread only). */
    private int heardWhenAsked;

    @Override
    public void onFrame(Connection c, MemorySegment buffer, long offset, int length) {
        if (reply.isDone()) {
            c.close(new ProtocolException("a frame on the TCP connection of an RDMA connection"));
            return;
        }
        if (ConnectionErrors.is(buffer, offset)) { // the server refused this connection, saying why
            reply.completeExceptionally(ConnectionErrors.exception(buffer, offset, length,
                    "the server refused the connection: ", ProtocolException::new));
            return;
        }
        if (FrameHeader.type(buffer, offset) != FrameDescriptor.TYPE_RDMA_HELLO) {
            reply.completeExceptionally(new ProtocolException("the server answered the RDMA hello with a frame of type "
                    + FrameHeader.type(buffer, offset)));
            return;
        }
        try {
            reply.complete(new Hello().decode(buffer, offset, length));
        } catch (Hello.HelloException e) {
            reply.completeExceptionally(e);
        }
    }

    @Override
    public void onTick(Connection c, long nowNanos) {
    }

    /** Only the handshake; later pings follow the RDMA connection's calls ({@link #callsInFlight}). */
    @Override
    public boolean hasTimedWork() {
        return !reply.isDone();
    }

    /**
     * The RDMA connection's calls waiting for responses: while there are any and the server says
     * nothing, over RDMA ({@link #heardElsewhere}) or here, this TCP connection, silent since the
     * hello, pings the server ({@code rdmarpc.tcp.pingInterval}); the server's I/O thread answers. A
     * server whose process stopped answering (hung, stopped, its host gone) is given up after the ping
     * timeout, and the RDMA connection with it ({@link RdmaConnection#peerLost}), where TCP keepalive
     * (answered by the kernel) would not notice.
     */
    @Override
    public int callsInFlight() {
        RdmaConnection r = rdma;
        return r == null ? 0 : r.callsInFlight();
    }

    /** Whether the RDMA connection's ticks found a message received since the last time this was asked (I/O thread). */
    @Override
    public boolean heardElsewhere() {
        RdmaConnection r = rdma;
        if (r == null) {
            return false;
        }
        int n = r.timers.ticksHeard();
        boolean heard = n != heardWhenAsked;
        heardWhenAsked = n;
        return heard;
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        reply.completeExceptionally(closed(cause));
        RdmaConnection r = rdma;
        if (r != null && attached) {
            r.peerLost(cause);
        }
    }

    /**
     * The connecting thread attached {@link #rdma} to its I/O thread over {@code c}: from now on a
     * close of {@code c} closes it. A close that came meanwhile (and so left it) closes it now.
     */
    void attached(Connection c) {
        attached = true;
        if (!c.isOpen()) {
            rdma.peerLost(null);
        }
    }

    /** @return what the hello's wait fails with when its connection closed with {@code cause} */
    private static IOException closed(Throwable cause) {
        if (cause instanceof CertificateRefusedException refused) {
            // a TLS 1.3 server's refusal of this client's certificate, after the wait for its verdict
            return new CertificateRefusedException(refused.getMessage(), refused);
        }
        boolean tls = false;
        for (Throwable t = cause; t != null; t = t.getCause()) {
            tls |= t instanceof javax.net.ssl.SSLException;
        }
        return new EOFException(tls
                ? "the TLS connection closed during the RDMA handshake: " + TlsConfig.describe(cause)
                : "the server closed the connection during the RDMA handshake (is rdma() enabled on the server?)"
                        + (cause == null || cause instanceof EOFException ? "" : ": " + cause.getMessage()));
    }

    /** Why the hello's connection closed, as its handler heard it (waiting a moment for the close to reach it), or "". */
    String closeReason() {
        try {
            reply.get(1, TimeUnit.SECONDS);
            return "";
        } catch (ExecutionException e) {
            return ": " + e.getCause().getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        } catch (TimeoutException e) {
            return "";
        }
    }

    /** @return true when the hello's connection closed because the server refused this client ({@link PeerRefusedException}) */
    boolean refusedByServer() {
        return reply.isCompletedExceptionally() && reply.exceptionNow() instanceof PeerRefusedException;
    }

    /**
     * What a connect that failed with {@code failure} throws when the server's refusal has come
     * meanwhile: its refusal, of its kind. A TLS server's check of its clients refuses a client as
     * soon as its handshake is done; that refusal reaches the client during its wait for the
     * certificate verdict, or while it sets up its queue pair (the set-up goes on, its hello cannot
     * be sent, or its attach finds the connection closed), or as the answer to its hello. Every way,
     * the client sees the same status, with the server's reason. So with a TLS 1.3 server's refusal
     * of the client's certificate that comes after the wait for its verdict: its alert closes the
     * connection ({@link CertificateRefusedException}).
     *
     * @return a {@link PeerRefusedException}, {@link ResourceExhaustedException} or
     *         {@link CertificateRefusedException} saying what the server said, with {@code failure} as
     *         its cause; {@code failure} itself when it is already one of those; or null when the
     *         server refused nothing (then {@code failure} stands)
     */
    IOException refusal(InetSocketAddress address, Exception failure) {
        if (failure instanceof PeerRefusedException || failure instanceof ResourceExhaustedException
                || failure instanceof CertificateRefusedException) {
            return (IOException) failure;
        }
        if (!reply.isCompletedExceptionally()) {
            return null;
        }
        Throwable said = reply.exceptionNow();
        String msg = "RDMA handshake with " + address + " failed: " + said.getMessage();
        if (said instanceof CertificateRefusedException) {
            return new CertificateRefusedException(msg, failure);
        }
        IOException e = said instanceof PeerRefusedException ? new PeerRefusedException(msg)
                : said instanceof ResourceExhaustedException ? new ResourceExhaustedException(msg) : null;
        if (e != null) {
            e.initCause(failure);
        }
        return e;
    }

    /** Waits until {@code deadline} for the server's hello: an IOException when it refused, failed or none came. */
    Hello awaitHello(InetSocketAddress address, long deadline, Duration handshakeTimeout)
            throws IOException, InterruptedException {
        try {
            return reply.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Hello.HelloException he) {
                String msg = "the server refused the RDMA connection: " + he.getMessage();
                throw he.status() == Hello.REFUSED_EXHAUSTED ? new ResourceExhaustedException(msg)
                        : new IOException(msg, he);
            }
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("RDMA handshake with " + address + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            throw new IOException("no RDMA hello from " + address + " within " + handshakeTimeout
                    + " (is rdma() enabled on the server?)");
        }
    }

    /**
     * Hands a connected {@code ready} to its I/O thread, with {@code handler}: false when it or its
     * hello channel {@code c} closed meanwhile, an IOException when the thread did not answer by {@code deadline}.
     */
    static boolean attach(RdmaConnection ready, Connection c, FrameHandler handler, long deadline)
            throws IOException, InterruptedException {
        RdmaLoop loop = ready.loop();
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        loop.execute(() -> {
            if (ready.isClosing() || !c.isOpen()) {
                done.complete(false);
                return;
            }
            loop.attach(ready, handler);
            done.complete(true);
        });
        try {
            return done.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("the RDMA I/O thread did not take the connection in time", e);
        }
    }
}
