package dev.rdmarpc.rpc.transport;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * One connection of a {@link Transport}: frames in through its {@link FrameHandler}, frames out
 * through claim/commit.
 *
 * <p>Sending: {@link #claim(int)} reserves space for one whole frame in the transport's outgoing
 * buffers and returns its offset in {@link #claimBuffer()}; the caller writes the frame there and
 * then calls {@link #commit()} (or {@link #abort()}). Between claim and commit/abort the caller holds
 * the connection's send lock, so it must not block and must not claim again. Frames are sent in
 * commit order; the transport batches them (a frame committed on the I/O thread goes out at the end
 * of that event-loop iteration; from another thread it wakes the loop).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public interface Connection {
    /** {@link #claim} result: the connection is closed. */
    long CLOSED = -1;
    /** {@link #claim} result: no buffer is free (the pool is exhausted). */
    long NO_BUFFER = -2;
    /** {@link #claim} result: too much is queued for sending (the peer does not read). */
    long BACK_PRESSURED = -3;
    /** {@link #claimWithTail} result: this connection cannot send that memory in place; copy it instead. */
    long UNSUPPORTED = -4;

    /**
     * Reserves {@code frameLength} bytes for one frame.
     *
     * @param frameLength the frame's whole length, at most the peer's maximum frame length
     * @return the frame's offset in {@link #claimBuffer()}, or {@link #CLOSED}, {@link #NO_BUFFER},
     *         {@link #BACK_PRESSURED} (then nothing is held and commit/abort must not be called)
     */
    long claim(int frameLength);

    /**
     * Reserves a frame whose last {@code tail.byteSize()} bytes are sent straight from {@code tail}
     * without being copied (zero-copy, e.g. RDMA from the application's registered memory); the
     * caller writes only the first {@code frameLength - tail.byteSize()} bytes into the claim. The
     * tail must stay unchanged until the peer has answered the frame. Transports that cannot do
     * this (the default) answer {@link #UNSUPPORTED} without holding anything, and the caller
     * claims the whole frame and copies.
     *
     * @param frameLength the frame's whole length, tail included
     * @param tail        the frame's last bytes
     * @return as {@link #claim(int)}, or {@link #UNSUPPORTED}
     */
    default long claimWithTail(int frameLength, MemorySegment tail) {
        return UNSUPPORTED;
    }

    /** @return the memory of the current claim; valid for the claiming thread until commit/abort */
    MemorySegment claimBuffer();

    /** Publishes the claimed frame for sending and releases the send lock. */
    void commit();

    /** Gives the claimed space back unsent and releases the send lock. */
    void abort();

    /** @return true while the connection is open */
    boolean isOpen();

    /** @return true when called on this connection's I/O thread */
    boolean inEventLoop();

    /** @return the interval of {@link FrameHandler#onTick} calls, in nanoseconds */
    long tickIntervalNanos();

    /** @return the peer's address */
    InetSocketAddress remoteAddress();

    /** @return this side's address */
    InetSocketAddress localAddress();

    /** @return bytes committed but not yet written to the network */
    long pendingBytes();

    /**
     * Closes the connection (asynchronously when called off the I/O thread); the handler's
     * {@link FrameHandler#onClose} follows with {@code cause}. Idempotent.
     *
     * @param cause why, or null for an orderly close
     */
    void close(Throwable cause);

    /**
     * Stops or resumes reading from the peer (backpressure on a server whose handlers lag).
     *
     * @param enabled false to stop reading
     */
    void setReadEnabled(boolean enabled);

    /**
     * Runs {@code task} on this connection's I/O thread (now, if already on it).
     *
     * @param task the task
     */
    void execute(Runnable task);
}
