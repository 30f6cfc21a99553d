package dev.rdmarpc.rpc.transport.frame;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Completes one frame longer than a receive buffer at a time, in a pooled buffer of the frame's
 * length: {@link #start} with the first bytes, then pieces appended (RDMA: one message each,
 * {@link #append}) or read into it in place (TCP: {@link #readTarget}, then {@link #advance}),
 * until the frame is whole; {@link #take} then hands the buffer to the caller, who releases it
 * after dispatching the frame. Used by both transports, so that the frame is reassembled one way.
 *
 * <p>Not thread-safe: one per connection, used on its I/O thread. Nothing allocates but the pooled
 * buffer.
 */
public final class FrameReassembler {
    private final BufferPool pool;
    private PooledBuffer buffer;
    private int filled;
    private int length;

    public FrameReassembler(BufferPool pool) {
        this.pool = pool;
    }

    /** @return true while a frame is being reassembled */
    public boolean active() {
        return buffer != null;
    }

    /**
     * Starts a frame of {@code frameLength} bytes whose first {@code available} bytes lie in
     * {@code src} at {@code offset}.
     *
     * @return false when the pool has no buffer for the frame (nothing started)
     */
    public boolean start(MemorySegment src, long offset, int available, int frameLength) {
        PooledBuffer b = pool.acquire(frameLength);
        if (b == null) {
            return false;
        }
        MemorySegment.copy(src, offset, b.segment(), 0, available);
        buffer = b;
        filled = available;
        length = frameLength;
        return true;
    }

    /** @return bytes of the frame still missing */
    public int missing() {
        return length - filled;
    }

    /**
     * Copies the next {@code n} bytes of the frame (at most {@link #missing}) from {@code src}.
     *
     * @return true when the frame is whole
     */
    public boolean append(MemorySegment src, long offset, int n) {
        MemorySegment.copy(src, offset, buffer.segment(), filled, n);
        return advance(n);
    }

    /** @return the buffer's view, positioned at the first missing byte and limited at the frame's end */
    public ByteBuffer readTarget() {
        ByteBuffer bb = buffer.byteBuffer();
        bb.limit(length).position(filled);
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
        return buffer == null ? "-" : filled + "/" + length;
    }
}
