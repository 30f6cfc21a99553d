package dev.rdmarpc.rpc.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One large native allocation owned by a {@link BufferPool}: either a slab carved into fixed-size
 * chunks or the memory of one large buffer.
 *
 * <p>The pool owns the slab's {@link Arena} and closes it once, after telling the
 * {@link SlabListener}. A transport may hang its own registration handle (an RDMA memory region) on
 * the slab with {@link #setRegistration} and find it again from any {@link PooledBuffer} through
 * {@link PooledBuffer#slab()}.
 */
public final class Slab {
    private final Arena arena;
    private final MemorySegment segment;
    private final boolean large;
    private volatile Object registration;
    // chunk slabs, guarded by the pool's lock: chunks handed out, and since when none has been
    int chunksInUse;
    long idleSinceNanos = System.nanoTime();
    boolean retired;

    Slab(Arena arena, MemorySegment segment, boolean large) {
        this.arena = arena;
        this.segment = segment;
        this.large = large;
    }

    /** @return the whole slab's memory */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the native address of the slab's first byte */
    public long address() {
        return segment.address();
    }

    /** @return the slab's size in bytes */
    public long byteSize() {
        return segment.byteSize();
    }

    /** @return true when this slab backs a single large buffer rather than many chunks */
    public boolean isLarge() {
        return large;
    }

    /** @return what a transport attached with {@link #setRegistration}, or null */
    public Object registration() {
        return registration;
    }

    /**
     * Attaches a transport's handle (for example an RDMA memory region) to this slab.
     *
     * @param registration the handle, or null to clear it
     */
    public void setRegistration(Object registration) {
        this.registration = registration;
    }

    void free() {
        arena.close();
    }
}
