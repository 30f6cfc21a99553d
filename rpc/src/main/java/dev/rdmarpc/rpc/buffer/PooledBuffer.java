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
 * release is detected and throws. A buffer is not thread-safe: hand it between threads only with a
 * happens-before edge (a lock, a queue).
 */
public final class PooledBuffer {
    private final BufferPool pool;
    private final Slab slab;
    private final MemorySegment segment;
    private ByteBuffer byteBuffer;
    private ByteBuffer slice;
    private int sliceOffset;
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
     * A {@link ByteBuffer} view of bytes {@code [offset, offset + length)} of the buffer, cached like
     * {@link #byteBuffer()}: asking for the same range again (a buffer reused for frames of one size)
     * allocates nothing. Position 0, limit {@code length}, each time.
     *
     * @param offset the range's first byte
     * @param length its length
     * @return the cached view of that range
     */
    public ByteBuffer byteBuffer(int offset, int length) {
        ByteBuffer s = slice;
        if (s == null || offset != sliceOffset || length != s.capacity()) {
            s = byteBuffer().slice(offset, length);
            slice = s;
            sliceOffset = offset;
        }
        return s.clear();
    }

    /** Returns the buffer to its pool. Call exactly once. */
    public void release() {
        pool.release(this);
    }
}
