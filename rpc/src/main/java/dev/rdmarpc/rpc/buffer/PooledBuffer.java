package dev.rdmarpc.rpc.buffer;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A buffer handed out by a {@link BufferPool}: a fixed-size chunk of a slab, or a large buffer with a
 * slab of its own.
 *
 * <p>Ownership: whoever {@linkplain BufferPool#acquire() acquired} the buffer owns it until it calls
 * {@link #release()}, exactly once; after that neither the segment nor the byte-buffer view may be
 * touched. The object itself is reused by the pool, so a stale reference is a bug, and a second
 * release is detected and throws. An owner may share the buffer with {@link #retain()}: each retain
 * adds one {@link #release()} that the buffer waits for before it goes back. A buffer is not thread-safe: hand it between threads only with a
 * happens-before edge (a lock, a queue).
 */
public final class PooledBuffer {
    private final BufferPool pool;
    private final Slab slab;
    private final MemorySegment segment;
    private ByteBuffer byteBuffer;
    private int holds;
    boolean inUse;
    PooledBuffer nextFree;
    /** A cached large buffer: when it was released (for {@link BufferPool#trim}). */
    long releasedAtNanos;

    PooledBuffer(BufferPool pool, Slab slab, MemorySegment segment) {
        this.pool = pool;
        this.slab = slab;
        this.segment = segment;
    }

    /** @return the buffer's memory, {@link #capacity()} bytes, valid until {@link #release()} */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the buffer's size in bytes */
    public int capacity() {
        return (int) segment.byteSize();
    }

    /** @return the slab the buffer lives in (its registration, its base address) */
    public Slab slab() {
        return slab;
    }

    /** @return the offset of this buffer's first byte inside {@link #slab()} */
    public long slabOffset() {
        return segment.address() - slab.address();
    }

    /** @return true when this buffer is a large buffer rather than a pool chunk */
    public boolean isLarge() {
        return slab.isLarge();
    }

    /**
     * A {@link ByteBuffer} view of the whole buffer for NIO channels. It is created once per buffer
     * and cached, so calling this on the data path does not allocate; its position and limit are the
     * caller's to set each time.
     *
     * @return the cached view (little-endian)
     */
    public ByteBuffer byteBuffer() {
        ByteBuffer b = byteBuffer;
        if (b == null) {
            b = segment.asByteBuffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
            byteBuffer = b;
        }
        return b;
    }

    /**
     * Adds a holder: the buffer goes back to its pool one {@link #release()} later. Not thread-safe,
     * like the rest of the buffer: retain and release on one thread (a connection's I/O thread).
     */
    public void retain() {
        holds++;
    }

    /** Gives up one hold; the last returns the buffer to its pool. Call once per acquire or retain. */
    public void release() {
        if (holds > 0) {
            holds--;
            return;
        }
        pool.release(this);
    }
}
