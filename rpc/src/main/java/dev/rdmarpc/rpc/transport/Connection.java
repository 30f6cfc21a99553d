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
 * of that event-loop iteration; from another thread it wakes the loop). A connection that can send
 * parts of a frame without copying them into the claim implements {@link ZeroCopySend} as well.
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
     * Keeps the frame being handed to {@link FrameHandler#onFrame(Connection, MemorySegment, long, int)}
     * where it is, past that call, until the answer's {@link FrameHold#release}: a stream's message can then
     * be read from the receive buffer after its handler returned, without a copy. Called on the I/O thread,
     * inside {@code onFrame}, for the frame it is handed; the memory it was handed stays valid and unchanged
     * until the release, which any thread may make, once. Both transports keep at most 16 frames per
     * connection this way, and keep receiving meanwhile (TCP reads on into another chunk; RDMA posts a
     * fresh chunk in the kept receive's place), so a reader that does not read costs memory, never the
     * connection's progress. RDMA keeps none with a shared receive queue, nor rendezvous frames.
     *
     * @return the hold, or null when the frame cannot be kept (the limit is reached, or the transport does
     *         not keep frames: the default): then the caller copies what it keeps
     */
    default FrameHold holdFrame() {
        return null;
    }

    /**
     * @return the TLS session of this connection once its handshake is done (the peer's verified
     *         certificates, the protocol and cipher), or null without TLS
     */
    javax.net.ssl.SSLSession tlsSession();

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
     * Closes the connection with a last word: reading stops now; the frames committed so far, and
     * those that the calls still in flight commit ({@link FrameHandler#callsInFlight}), are written;
     * then {@code lastFrame} (copied here, so it takes nothing from the buffer pool), and then the
     * connection closes with {@code cause}. Bounded: a peer that does not take the bytes, or calls that
     * do not finish, get a few seconds, then the connection closes anyway.
     *
     * @param lastFrame the whole last frame to send
     * @param cause     why, handed to the handler's {@link FrameHandler#onClose}
     */
    void closeAfter(MemorySegment lastFrame, Throwable cause);

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
