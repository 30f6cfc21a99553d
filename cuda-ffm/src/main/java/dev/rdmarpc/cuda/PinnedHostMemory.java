package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory from {@code cuMemHostAlloc}, seen from Java as a {@link MemorySegment}.
 * {@link #close()} makes the segment inaccessible and then frees the memory ({@code cuMemFreeHost});
 * wait for asynchronous copies that use it first. See {@link CudaResource} for ownership and threads.
 */
public final class PinnedHostMemory extends CudaResource {
    /** {@code CU_MEMHOSTALLOC_PORTABLE}: pinned for every context, not only the allocating one. */
    public static final int PORTABLE = 0x01;
    /** {@code CU_MEMHOSTALLOC_DEVICEMAP}: also mapped into the device address space. */
    public static final int DEVICE_MAP = 0x02;
    /** {@code CU_MEMHOSTALLOC_WRITECOMBINED}: fast to write from the host and copy, slow to read. */
    public static final int WRITE_COMBINED = 0x04;

    private final Arena arena;
    private final MemorySegment pointer;
    private final MemorySegment segment;
    private final int flags;

    PinnedHostMemory(CudaContext context, MemorySegment pointer, long size, int flags) {
        super(context);
        this.arena = Arena.ofShared();
        this.pointer = pointer;
        this.segment = pointer.reinterpret(size, arena, null);
        this.flags = flags;
    }

    /** @return the memory; inaccessible (it throws) once closed */
    public MemorySegment segment() {
        return segment;
    }

    /** @return its size in bytes */
    public long byteSize() {
        return segment.byteSize();
    }

    /** @return the flags it was allocated with */
    public int flags() {
        return flags;
    }

    @Override
    void free() {
        arena.close();
        Cuda.check("cuMemFreeHost", cuda_h.cuMemFreeHost(pointer));
    }

    @Override
    String what() {
        return "pinned host memory of " + segment.byteSize() + " bytes";
    }

    @Override
    public String toString() {
        return "PinnedHostMemory[0x" + Long.toHexString(pointer.address()) + ", " + segment.byteSize() + " bytes"
                + (isClosed() ? ", closed" : "") + "]";
    }
}
