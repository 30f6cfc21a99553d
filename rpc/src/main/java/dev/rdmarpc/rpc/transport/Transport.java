package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.buffer.BufferPool;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A way to move frames between processes (TCP, RDMA), with its I/O threads and its
 * {@link BufferPool}.
 *
 * <p>Ownership: whoever creates a transport closes it; closing closes every listener and connection
 * it made, stops its threads, then closes its buffer pool. Clients and servers built without an
 * explicit transport create and own one. Thread-safe.
 */
public interface Transport extends AutoCloseable {
    /** @return a short name for logs and events: "tcp", "rdma" */
    String name();

    /** @return the pool every buffer of this transport comes from */
    BufferPool bufferPool();

    /**
     * Starts accepting connections.
     *
     * @param address        where to listen (port 0: any free port)
     * @param maxFrameLength the largest frame a peer may send; longer ones close the connection
     * @param acceptor       gives each accepted connection its frame handler
     * @return the listening endpoint
     * @throws IOException when the address cannot be bound
     */
    ServerEndpoint listen(InetSocketAddress address, int maxFrameLength, Acceptor acceptor) throws IOException;

    /**
     * Connects to a listening endpoint; blocks until connected or failed.
     *
     * @param address        the server's address
     * @param maxFrameLength the largest frame the server may send
     * @param handler        receives the connection's frames and its close
     * @param timeout        how long to wait for the connection
     * @return the open connection
     * @throws IOException when the connection cannot be made in time
     */
    Connection connect(InetSocketAddress address, int maxFrameLength, FrameHandler handler, Duration timeout)
            throws IOException;

    /** Closes every endpoint and connection, stops the I/O threads, closes the pool. Idempotent. */
    @Override
    void close();
}
