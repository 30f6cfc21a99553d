package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.MemorySegment;

/**
 * Existing host memory page-locked with {@code cuMemHostRegister}. The memory itself stays its
 * owner's: {@link #close()} only unregisters it ({@code cuMemHostUnregister}), and the memory must
 * stay valid until then. See {@link CudaResource} for ownership and threads.
 */
public final class HostRegistration extends CudaResource {
    /** {@code CU_MEMHOSTREGISTER_PORTABLE}: pinned for every context. */
    public static final int PORTABLE = 0x01;
    /** {@code CU_MEMHOSTREGISTER_DEVICEMAP}: also mapped into the device address space. */
    public static final int DEVICE_MAP = 0x02;
    /** {@code CU_MEMHOSTREGISTER_READ_ONLY}: the device only reads it. */
    public static final int READ_ONLY = 0x08;

    private final MemorySegment memory;
    private final int flags;

    HostRegistration(CudaContext context, MemorySegment memory, int flags) {
        super(context);
        this.memory = memory;
        this.flags = flags;
    }

    /** @return the registered memory (still owned by whoever gave it) */
    public MemorySegment segment() {
        return memory;
    }

    /** @return the flags it was registered with */
    public int flags() {
        return flags;
    }

    @Override
    void free() {
        Cuda.check("cuMemHostUnregister", cuda_h.cuMemHostUnregister(memory));
    }

    @Override
    String what() {
        return "host registration of " + memory.byteSize() + " bytes";
    }

    @Override
    public String toString() {
        return "HostRegistration[0x" + Long.toHexString(memory.address()) + ", " + memory.byteSize() + " bytes"
                + (isClosed() ? ", closed" : "") + "]";
    }
}
