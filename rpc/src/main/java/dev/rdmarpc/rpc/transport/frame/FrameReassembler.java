package dev.rdmarpc.rpc.transport.frame;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Completes one frame longer than a receive buffer at a time, in a pooled buffer that grows with the
 * bytes that arrived: {@link #start} with the first bytes, then pieces appended (RDMA: one message
 * each, {@link #append}) or read into it in place (TCP: {@link #readTarget}, then {@link #advance}),
 * with {@link #ensureRoom} before each, until the frame is whole; {@link #take} then hands the buffer
 * to the caller, who releases it after dispatching the frame. Used by both transports, so that the
 * frame is reassembled one way.
 *
 * <p>Memory follows the bytes, not the length a header declares. The buffer sizes of a frame are
 * planned from its length down: the frame's length, a {@value #GROWTH}th of it, a
 * {@value #GROWTH}th of that, and so on; the first is the largest of them that is at most
 * {@value #GROWTH} times the bytes that started the frame and an eighth. Each time a buffer is full,
 * the next larger one takes over and the bytes so far are copied into it. So a peer holds at most
 * 4.5 times what it sent, and a whole frame costs at most a third of its length in copies (a quarter
 * for a frame whose first buffer is a quarter of it, none for a frame within 4.5 times its first
 * bytes). That is for the frames a server receives from its peers
 * ({@code growsWithBytes}); a client takes a buffer of the whole length for a response at once,
 * without those copies: the peer is the server it chose to call, and the length is bounded by its
 * own {@code maxFrameLength}.
 *
 * <p>Not thread-safe: one per connection, used on its I/O thread. Nothing allocates but the pooled
 * buffers.
 */
public final class FrameReassembler {
    /** How much larger each buffer of a frame is than the one before. */
    public static final int GROWTH = 4;

    private final BufferPool pool;
    /** The pool's large-buffer budget: no frame longer than this can ever be whole. */
    private final long maxLargeBytes;
    private final boolean growsWithBytes;
    private PooledBuffer buffer;
    /** Bytes of the frame the buffer takes: the planned size it was asked for. */
    private int room;
    /** Larger buffers still planned for the frame: {@link #room} is {@code ceil(length / GROWTH^steps)}. */
    private int steps;
    private int filled;
    private int length;
    private long growths;
    private long copiedBytes;

    /**
     * @param pool           where the buffers come from
     * @param growsWithBytes true: a frame's buffer grows with its bytes (a server's connections);
     *                       false: it is taken for the whole frame at its start
     */
    public FrameReassembler(BufferPool pool, boolean growsWithBytes) {
        this.pool = pool;
        this.maxLargeBytes = pool.config().maxLargeBytes(); // config() copies: once, not per frame
        this.growsWithBytes = growsWithBytes;
    }

    /** @return true while a frame is being reassembled */
    public boolean active() {
        return buffer != null;
    }

    /**
     * Starts a frame of {@code frameLength} bytes whose first {@code available} bytes lie in
     * {@code src} at {@code offset}.
     *
     * @return false when the pool has no buffer for the frame's first bytes, or the frame is longer
     *         than its whole large-buffer budget (nothing started)
     */
    public boolean start(MemorySegment src, long offset, int available, int frameLength) {
        if (frameLength > maxLargeBytes) {
            return false; // could never be whole: refuse it now, not after taking memory for part of it
        }
        int k = growsWithBytes ? firstStep(frameLength, available) : 0;
        long first = planned(frameLength, k);
        PooledBuffer b = pool.acquire((int) first);
        if (b == null) {
            return false;
        }
        MemorySegment.copy(src, offset, b.segment(), 0, available);
        buffer = b;
        filled = available;
        length = frameLength;
        room = (int) first;
        steps = k;
        return true;
    }

    /**
     * @return what a frame of {@code frameLength} bytes claims of its peer address's share: its
     *         length and an eighth, the most the pool's buffer for the whole frame can come to
     */
    public static long shareOf(int frameLength) {
        return frameLength + frameLength / 8;
    }

    /**
     * How many larger buffers are planned after a frame's first: the first is the largest planned
     * size at most {@value #GROWTH} times {@code available} and an eighth (the eighth so that a
     * frame a header longer than a power of two does not start just over the bytes it has).
     */
    private static int firstStep(int frameLength, int available) {
        long bound = (long) GROWTH * Math.max(available, 1) * 9 / 8;
        int k = 0;
        for (long size = frameLength; size > bound; size = ceilDiv(size, GROWTH)) {
            k++;
        }
        return k;
    }

    /**
     * @return how many buffers a server's reassembler takes, one after the other, for a frame of
     *         {@code frameLength} bytes whose first {@code available} arrived in one piece and the
     *         rest in pieces no larger than what the buffer then holds (TCP's reads)
     */
    public static int buffersFor(int frameLength, int available) {
        return firstStep(frameLength, available) + 1;
    }

    /** The planned size of the buffer of a frame of {@code frameLength} bytes with {@code k} larger ones still to come. */
    private static long planned(int frameLength, int k) {
        long size = frameLength;
        for (int i = 0; i < k; i++) {
            size = ceilDiv(size, GROWTH); // ceil(ceil(x / g) / g) == ceil(x / g^2)
        }
        return size;
    }

    private static long ceilDiv(long x, long y) {
        return (x + y - 1) / y;
    }

    /**
     * Makes room in the buffer for the next {@code n} bytes of the frame (at most {@link #missing}),
     * moving to the next larger buffer when this one is full.
     *
     * @return false when the pool has no larger buffer (the frame keeps what it has)
     */
    public boolean ensureRoom(int n) {
        int need = filled + n;
        if (need <= room) {
            return true;
        }
        int k = steps;
        long size;
        do {
            k--;
            size = planned(length, k);
        } while (size < need && k > 0);
        PooledBuffer b = pool.acquire((int) Math.max(size, need));
        if (b == null) {
            return false;
        }
        MemorySegment.copy(buffer.segment(), 0, b.segment(), 0, filled);
        buffer.release();
        buffer = b;
        room = (int) Math.max(size, need);
        steps = k;
        growths++;
        copiedBytes += filled;
        return true;
    }

    /** @return bytes of the frame still missing */
    public int missing() {
        return length - filled;
    }

    /** @return bytes of the frame its buffer takes now (what the peer's bytes so far have earned) */
    public int room() {
        return buffer == null ? 0 : room;
    }

    /**
     * Copies the next {@code n} bytes of the frame (at most {@link #missing}, and room made for them
     * with {@link #ensureRoom}) from {@code src}.
     *
     * @return true when the frame is whole
     */
    public boolean append(MemorySegment src, long offset, int n) {
        MemorySegment.copy(src, offset, buffer.segment(), filled, n);
        return advance(n);
    }

    /**
     * @return the buffer's view, positioned at the first missing byte and limited at the end of the
     *         room it has (call {@link #ensureRoom} first: then there is room for at least a byte)
     */
    public ByteBuffer readTarget() {
        ByteBuffer bb = buffer.byteBuffer();
        bb.limit(room).position(filled);
        return bb;
    }

    /**
     * Counts {@code n} bytes read into {@link #readTarget}.
     *
     * @return true when the frame is whole
     */
    public boolean advance(int n) {
        filled += n;
        return filled == length;
    }

    /** @return the length of the frame being (or last) reassembled */
    public int frameLength() {
        return length;
    }

    /** @return times a frame's buffer was replaced by a larger one, since this reassembler was made */
    public long growths() {
        return growths;
    }

    /** @return bytes copied from a full buffer into its larger replacement, since this reassembler was made */
    public long copiedBytes() {
        return copiedBytes;
    }

    /** @return the whole frame's buffer, now the caller's to release; the reassembler is free again */
    public PooledBuffer take() {
        PooledBuffer b = buffer;
        buffer = null;
        return b;
    }

    /** Gives the buffer of an unfinished frame back (the connection closes). */
    public void release() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }

    @Override
    public String toString() {
        return buffer == null ? "-" : filled + "/" + length + " in " + room;
    }
}
