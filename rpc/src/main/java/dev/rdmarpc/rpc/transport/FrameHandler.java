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
     * Whether {@link #onTick} has something to time now (calls waiting with deadlines, a handshake):
     * while no connection of an I/O thread has, and no traffic came for a while, a transport may tick
     * less often (RDMA: {@code polling().idleTickInterval}). Read on the I/O thread; a stale answer
     * costs at most one idle tick interval. Default: true (tick at the full rate).
     *
     * @return true while this handler needs ticks at the full rate
     */
    default boolean hasTimedWork() {
        return true;
    }

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
     * The transport refuses this connection and will close it: the peer sent a header that breaks
     * the protocol ({@link ProtocolException}), started a frame and did not finish it in time (also a
     * {@link ProtocolException}), stayed idle too long ({@link IdleTimeoutException}), or no receive
     * buffer is free for it ({@link ResourceExhaustedException}). Reading has stopped; every frame
     * received before was handed to {@link #onFrame}. The handler may explain itself with
     * {@link Connection#closeAfter} (a server sends the reason as a connection-level error after the
     * responses it still owes); it must close the connection one way or the other. Default: close
     * at once with {@code cause}.
     *
     * @param connection the connection
     * @param cause      why, with a message fit for the peer
     */
    default void onRefused(Connection connection, java.io.IOException cause) {
        connection.close(cause);
    }

    /**
     * @return on a server, calls taken from this connection's frames whose responses are not
     *         committed yet (blocking handlers still running): the transport does not count a
     *         connection with calls in flight as idle, and lets them answer before a
     *         {@link Connection#closeAfter} close. On a client, calls waiting for their responses:
     *         the TCP transport pings a server that stays silent meanwhile. Any thread reads it
     *         (a hint, read without locks); default 0.
     */
    default int callsInFlight() {
        return 0;
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
