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
     * Reserves {@code frameLength} bytes for one frame unless {@code unsentLimit} bytes or more are
     * already queued unsent ({@link #pendingBytes()}): then it answers {@link #BACK_PRESSURED} and
     * holds nothing. The check and the claim are one step under the send lock, so producers that all
     * claim this way keep the queue within {@code unsentLimit} plus one frame, however many threads
     * race. A client's calls claim this way and wait for {@link FrameHandler#onSendProgress} when
     * refused; a server's responses use {@link #claim(int)} (it stops reading requests instead).
     *
     * @param frameLength the frame's whole length
     * @param unsentLimit unsent bytes at or above which the claim is refused
     * @return as {@link #claim(int)}
     */
    long claim(int frameLength, long unsentLimit);

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
     * @param unsentLimit as in {@link #claim(int, long)}
     * @return as {@link #claim(int, long)}, or {@link #UNSUPPORTED}
     */
    default long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit) {
        return UNSUPPORTED;
    }

    /**
     * Reserves a frame whose last {@code tail.byteSize()} bytes are written to the network straight
     * from {@code tail} (the caller's memory, not copied), as {@link #claimWithTail} does, but with a
     * way out: {@link #detachInPlace} with the same {@code token} makes the transport stop reading
     * {@code tail} at any time. The caller writes only the first {@code frameLength - tail.byteSize()}
     * bytes into the claim. Transports or tails that cannot go this way, or not now (the default), answer
     * {@link #UNSUPPORTED} without holding anything, and the caller claims the whole frame and copies.
     *
     * @param frameLength the frame's whole length, tail included
     * @param tail        the frame's last bytes
     * @param unsentLimit as in {@link #claim(int, long)}
     * @param token       names this frame to {@link #detachInPlace} (a call id)
     * @return as {@link #claim(int, long)}, or {@link #UNSUPPORTED}
     */
    default long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        return UNSUPPORTED;
    }

    /**
     * Makes the transport stop reading the tail of the in-place frame {@code token} (see
     * {@link #claimInPlace}): what is still unsent is copied into the transport's own buffers, or, if
     * none is free, the connection closes. After this returns the tail's memory may change or go. A
     * token that is no longer queued (all written, or never in place) costs a scan of the queue. On
     * the connection's I/O thread only.
     *
     * @param token as given to {@link #claimInPlace}
     */
    default void detachInPlace(long token) {
    }

    /**
     * Reserves a frame whose last {@code length} bytes are sent from {@code src} at {@code offset}
     * without a copy, when that memory lies in the frame this connection is handing to its handler
     * right now (an echo, or a response that forwards part of its request): the transport keeps the
     * receive buffer until those bytes are written. Only on the I/O thread, inside
     * {@link FrameHandler#onFrame}. Otherwise, or when the transport cannot (the default), it
     * answers {@link #UNSUPPORTED} without holding anything and the caller claims the whole frame.
     *
     * @param frameLength the frame's whole length, those bytes included
     * @param src         memory holding the bytes
     * @param offset      their offset in {@code src}
     * @param length      how many
     * @return as {@link #claim(int)}, or {@link #UNSUPPORTED}
     */
    default long claimFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        return UNSUPPORTED;
    }

    /**
     * Claims {@code bytes} for one large frame being received on this connection from its peer
     * address's share, where its transport keeps one (accepted TCP connections, and the TCP
     * connection an RDMA connection started on: {@code ConnectionLimits.maxFrameBytesPerAddress}).
     * Any thread. A connection without a share (the default) always grants.
     *
     * @return false when the frame must wait for the address's other frames
     */
    default boolean takeFrameShare(long bytes) {
        return true;
    }

    /** Gives back what {@link #takeFrameShare} granted. Any thread. */
    default void releaseFrameShare(long bytes) {
    }

    /**
     * @return the TLS session of this connection once its handshake is done (the peer's verified
     *         certificates, the protocol and cipher), or null without TLS
     */
    default javax.net.ssl.SSLSession tlsSession() {
        return null;
    }

    /** @return the memory of the current claim; valid for the claiming thread until commit/abort */
    MemorySegment claimBuffer();

    /** Publishes the claimed frame for sending and releases the send lock. */
    void commit();

    /** Gives the claimed space back unsent and releases the send lock. */
    void abort();

    /**
     * Commits the claimed frame while only its first {@code readyLength} bytes are written, so that a
     * producer can fill the rest (a GPU attachment being copied to host memory) outside the send
     * lock while the transport already sends what is ready. Frames committed later queue behind it.
     * The producer keeps writing into {@link #claimBuffer()} (fetched before this call) at the
     * claimed offset and reports progress with {@link #releaseHeld} until the whole frame is
     * released, or gives up with {@link #abandonHeld} when the fill fails (a frame cannot be taken
     * back once committed, so that closes the connection).
     *
     * <p>Optional: a transport that cannot hold a frame, or not now (one held frame at a time), returns
     * -1 and leaves the claim open; the producer then fills the frame and calls {@link #commit()} or
     * {@link #abort()} as usual. Never call this on the connection's I/O thread.
     *
     * @param readyLength bytes from the frame's start that are written, in [0, frame length]
     * @return a token for {@link #releaseHeld}, or -1 (nothing committed, the claim is still open)
     */
    default long commitHeld(int readyLength) {
        return -1;
    }

    /**
     * Reports that the first {@code readyLength} bytes of the frame held by {@code token} are written;
     * at the frame's length the hold ends. Counts never decrease. Any thread; a token that is no
     * longer held is ignored.
     *
     * @param token       from {@link #commitHeld}
     * @param readyLength bytes from the frame's start that are written
     */
    default void releaseHeld(long token, int readyLength) {
    }

    /**
     * The held frame of {@code token} cannot be completed: the connection is closed without sending
     * the rest of it (the peer never sees a frame with unwritten bytes), and its space is freed. Any
     * thread; a token that is no longer held only closes the connection.
     *
     * @param token from {@link #commitHeld}
     * @param cause why, handed to the connection's close
     */
    default void abandonHeld(long token, Throwable cause) {
        close(cause);
    }

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
     * Closes the connection with a last word: reading stops now; the frames committed so far, and
     * those that the calls still in flight commit ({@link FrameHandler#callsInFlight}), are written;
     * then {@code lastFrame} (copied here, so it takes nothing from the buffer pool), and then the
     * connection closes with {@code cause}. Bounded: a peer that does not take the bytes, or calls that
     * do not finish, get a few seconds, then the connection closes anyway. Transports that cannot
     * do this (the default) close at once.
     *
     * @param lastFrame the whole last frame to send
     * @param cause     why, handed to the handler's {@link FrameHandler#onClose}
     */
    default void closeAfter(MemorySegment lastFrame, Throwable cause) {
        close(cause);
    }

    /**
     * Stops or resumes reading from the peer (backpressure on a server whose handlers lag). Called on
     * the I/O thread (from a handler, say) the state changes at once; from another thread, when the I/O
     * thread runs the task. On resuming, what waited is handed to the handler after the current event,
     * never inside the call that resumed.
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
