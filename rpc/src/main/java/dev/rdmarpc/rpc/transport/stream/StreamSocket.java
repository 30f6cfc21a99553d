package dev.rdmarpc.rpc.transport.stream;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ByteChannel;
import java.nio.channels.GatheringByteChannel;

/**
 * A connected non-blocking TCP socket as a {@link TcpConnection} uses it, whatever its loop waits
 * with: a NIO {@code SocketChannel} under a {@code Selector} (the TCP transport) or a plain
 * descriptor in the RDMA loop's {@code poll(2)} ({@link PolledStreamSocket}). It reads and writes as
 * a non-blocking {@code SocketChannel} does (0 when nothing can move now, -1 at the end of the
 * stream). Readiness comes back through {@link TcpConnection#onReady}.
 *
 * <p>Loop thread only, but for the addresses. One owner, the connection: it {@link #close}s it once.
 */
public interface StreamSocket extends ByteChannel, GatheringByteChannel {
    /** Starts waiting for the socket to be readable, telling {@code connection}; on the loop thread, once. */
    void register(TcpConnection connection) throws IOException;

    /** Waits for what is asked from now on: readable, writable, both or neither. */
    void interest(boolean read, boolean write);

    /** @return whether it is registered and not closed (interest changes take effect) */
    boolean registered();

    /** @return the peer's address */
    InetSocketAddress remoteAddress();

    /** @return the socket's own address */
    InetSocketAddress localAddress();

    /** Sends the end of the stream; reading goes on. */
    void shutdownOutput() throws IOException;

    /** Stops waiting and closes the socket; later calls do nothing. */
    @Override
    void close() throws IOException;
}
