package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.frame.ConnectionErrors;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.EOFException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * The client's handler on the TCP connection of an RDMA connection: receives the server's hello
 * ({@link #reply}), then watches the TCP connection's liveness (its close means the peer is gone,
 * {@link RdmaConnection#peerLost}). Runs on the TCP I/O thread.
 */
final class ClientHandshake implements FrameHandler {
    final CompletableFuture<Hello> reply = new CompletableFuture<>();
    volatile RdmaConnection rdma;

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
     * The RDMA connection's calls waiting for responses: while there are any, this TCP connection,
     * silent since the hello, pings the server ({@code TcpTransport.Config.pingInterval}); the
     * server's TCP I/O thread answers. A server whose process stopped answering (hung, stopped,
     * its host gone) is given up after the ping timeout, and the RDMA connection with it
     * ({@link RdmaConnection#peerLost}), where TCP keepalive (answered by the kernel) would not notice.
     */
    @Override
    public int callsInFlight() {
        RdmaConnection r = rdma;
        return r == null ? 0 : r.callsInFlight();
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        boolean tls = false;
        for (Throwable t = cause; t != null; t = t.getCause()) {
            tls |= t instanceof javax.net.ssl.SSLException;
        }
        reply.completeExceptionally(new EOFException(tls
                ? "the TLS connection closed during the RDMA handshake: " + TlsConfig.describe(cause)
                : "the server closed the connection during the RDMA handshake (is rdma() enabled on the server?)"
                        + (cause == null || cause instanceof EOFException ? "" : ": " + cause.getMessage())));
        RdmaConnection r = rdma;
        if (r != null) {
            r.peerLost(cause);
        }
    }
}
