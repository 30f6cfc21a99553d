package dev.rdmarpc.rpc.transport;

import java.lang.foreign.MemorySegment;

/**
 * The ways a {@link Connection} may send a frame without first copying all of it into the claimed
 * space, offered by a connection that implements this interface too. A writer asks once, when it
 * takes the connection ({@code connection instanceof ZeroCopySend}), and otherwise claims whole
 * frames and copies.
 *
 * <ul>
 *   <li><b>Tails sent from the caller's memory</b>: {@link #claimWithTail}, {@link #claimInPlace}
 *       (with {@link #detachInPlace} as its way out) and {@link #claimFromReceived} claim a frame whose
 *       last bytes the transport sends straight from memory the caller names; the caller writes only the
 *       frame's first bytes into the claim.</li>
 *   <li><b>Partial frames</b>: {@link #commitPartial} commits a claimed frame while only its first bytes
 *       are written; the transport sends what is written while the producer writes the rest into the
 *       claimed space, reports progress with {@link #partialWritten} and ends with the whole frame
 *       written, or gives up with {@link #abandonPartial}.</li>
 * </ul>
 *
 * <p>Each way may be refused for one frame (a transport that does not offer it, or not now): then
 * nothing is held, and the caller falls back to a plain {@link Connection#claim} or
 * {@link Connection#commit}. Thread-safety as {@link Connection}, with the limits each method names.
 */
public interface ZeroCopySend {
    /** Result of the {@code claim*} methods: not this way, not now; claim the whole frame and copy. */
    long UNSUPPORTED = -4;

    /**
     * Reserves a frame whose last {@code tail.byteSize()} bytes are sent straight from {@code tail}
     * without being copied (e.g. RDMA from the application's registered memory); the caller writes
     * only the first {@code frameLength - tail.byteSize()} bytes into the claim. The tail must stay
     * unchanged until the peer has answered the frame.
     *
     * @param frameLength the frame's whole length, tail included
     * @param tail        the frame's last bytes
     * @param unsentLimit as in {@link Connection#claim(int, long)}
     * @return as {@link Connection#claim(int, long)}, or {@link #UNSUPPORTED} (nothing held)
     */
    long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit);

    /**
     * Reserves a frame whose last {@code tail.byteSize()} bytes are written to the network straight
     * from {@code tail} (the caller's memory, not copied), as {@link #claimWithTail} does, but with a
     * way out: {@link #detachInPlace} with the same {@code token} makes the transport stop reading
     * {@code tail} at any time. The caller writes only the first {@code frameLength - tail.byteSize()}
     * bytes into the claim.
     *
     * @param frameLength the frame's whole length, tail included
     * @param tail        the frame's last bytes
     * @param unsentLimit as in {@link Connection#claim(int, long)}
     * @param token       names this frame to {@link #detachInPlace} (a call id)
     * @return as {@link Connection#claim(int, long)}, or {@link #UNSUPPORTED} (nothing held)
     */
    long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token);

    /**
     * Makes the transport stop reading the tail of the in-place frame {@code token} (see
     * {@link #claimInPlace}): what is still unsent is copied into the transport's own buffers, or, if
     * none is free, the connection closes. After this returns the tail's memory may change or go. A
     * token that is no longer queued (all written, or never in place) costs a scan of the queue. On
     * the connection's I/O thread only.
     *
     * @param token as given to {@link #claimInPlace}
     */
    void detachInPlace(long token);

    /**
     * Reserves a frame whose last {@code length} bytes are sent from {@code src} at {@code offset}
     * without a copy, when that memory lies in the frame this connection is handing to its handler
     * right now (an echo, or a response that forwards part of its request): the transport keeps the
     * receive buffer until those bytes are written. Only on the I/O thread, inside
     * {@link FrameHandler#onFrame}; otherwise it answers {@link #UNSUPPORTED}.
     *
     * @param frameLength the frame's whole length, those bytes included
     * @param src         memory holding the bytes
     * @param offset      their offset in {@code src}
     * @param length      how many
     * @return as {@link Connection#claim(int)}, or {@link #UNSUPPORTED} (nothing held)
     */
    long claimFromReceived(int frameLength, MemorySegment src, long offset, int length);

    /**
     * Commits the claimed frame as a partial frame: only its first {@code writtenLength} bytes are
     * written, and a producer fills the rest (a GPU attachment being copied to host memory) outside
     * the send lock while the transport already sends what is written. Frames committed later queue
     * behind it. The producer keeps writing into {@link Connection#claimBuffer()} (fetched before
     * this call) at the claimed offset and reports progress with {@link #partialWritten} until the
     * whole frame is written, or gives up with {@link #abandonPartial} when the fill fails (a frame
     * cannot be taken back once committed, so that closes the connection).
     *
     * <p>A transport that cannot take a partial frame, or not now (one at a time), returns -1 and
     * leaves the claim open; the producer then fills the frame and calls {@link Connection#commit()}
     * or {@link Connection#abort()} as usual. Never call this on the connection's I/O thread.
     *
     * @param writtenLength bytes from the frame's start that are written, in [0, frame length]
     * @return a token for {@link #partialWritten}, or -1 (nothing committed, the claim is still open)
     */
    long commitPartial(int writtenLength);

    /**
     * Reports that the first {@code writtenLength} bytes of the partial frame {@code token} are
     * written; the transport may send them now. At the frame's length it is a whole frame again.
     * Counts never decrease. Any thread; a token that no longer names a partial frame is ignored.
     *
     * @param token         from {@link #commitPartial}
     * @param writtenLength bytes from the frame's start that are written
     */
    void partialWritten(long token, int writtenLength);

    /**
     * The partial frame {@code token} cannot be completed: the connection is closed without sending
     * the rest of it (the peer never sees a frame with unwritten bytes), and its space is freed. Any
     * thread; a token that no longer names a partial frame only closes the connection.
     *
     * @param token from {@link #commitPartial}
     * @param cause why, handed to the connection's close
     */
    void abandonPartial(long token, Throwable cause);
}
