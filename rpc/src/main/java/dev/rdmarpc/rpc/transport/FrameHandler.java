package dev.rdmarpc.rpc.transport;

import java.lang.foreign.MemorySegment;

/**
 * Receives the events of one {@link Connection}, always on that connection's I/O thread, one at a
 * time. Implementations must not block.
 */
public interface FrameHandler {
    /**
     * A whole frame arrived. Its header has passed {@code FrameDescriptor.check}. The memory is the
     * transport's receive buffer: valid only until this method returns.
     *
     * @param connection the connection
     * @param buffer     memory holding the frame
     * @param offset     where the frame starts
     * @param length     the frame's length (header, payload, attachment)
     */
    void onFrame(Connection connection, MemorySegment buffer, long offset, int length);

    /**
     * Periodic tick (about every {@link Connection#tickIntervalNanos()}), for timeouts and idle
     * checks.
     *
     * @param connection the connection
     * @param nowNanos   {@link System#nanoTime()} at the tick
     */
    void onTick(Connection connection, long nowNanos);

    /**
     * Queued bytes left for the network: {@link Connection#pendingBytes()} fell (a TCP write, an RDMA
     * send completion). For producers waiting for room below a limit ({@link Connection#claim(int, long)});
     * it must be cheap. Default: nothing.
     *
     * @param connection the connection
     */
    default void onSendProgress(Connection connection) {
    }

    /**
     * The connection closed; called once. No frame follows.
     *
     * @param connection the connection
     * @param cause      why: null for an orderly close by this side, otherwise the error (an
     *                   {@link java.io.EOFException} when the peer closed, a {@link ProtocolException}
     *                   for bad input)
     */
    void onClose(Connection connection, Throwable cause);
}
