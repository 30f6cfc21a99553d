package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One reference to a GPU's primary context ({@code cuDevicePrimaryCtxRetain}), the context the CUDA
 * runtime and most libraries share. It makes device memory, pinned host memory, streams and events,
 * and copies between host and device memory by address.
 *
 * <p>Ownership: whoever retained the context closes it. {@link #close()} closes the resources made
 * from it that are still open (newest first) and then releases the reference
 * ({@code cuDevicePrimaryCtxRelease}), exactly once. Each {@link CudaDevice#retainPrimaryContext()}
 * is a reference of its own; the driver destroys the primary context when the last one is released.
 *
 * <p>Thread-safety: every method may be called from any thread. Each makes the context current on
 * the calling thread ({@code cuCtxSetCurrent}) before it calls the driver, so callers never need to.
 * {@link #makeCurrent()} is there for code that calls the raw bindings itself.
 */
public final class CudaContext implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment handle;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LinkedHashSet<CudaResource> resources = new LinkedHashSet<>();

    private CudaContext(CudaDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
    }

    static CudaContext retainPrimary(CudaDevice device) {
        Cuda.init();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Cuda.check("cuDevicePrimaryCtxRetain", cuda_h.cuDevicePrimaryCtxRetain(out, device.handle()));
            return new CudaContext(device, out.get(ADDRESS, 0));
        }
    }

    /** @return the GPU of this context */
    public CudaDevice device() {
        return device;
    }

    /** @return the {@code CUcontext} handle, for the raw bindings */
    public MemorySegment handle() {
        return handle;
    }

    /** @return true once {@link #close()} was called */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Makes this context current on the calling thread ({@code cuCtxSetCurrent}).
     *
     * @throws IllegalStateException when the context is closed
     */
    public void makeCurrent() {
        if (closed.get()) {
            throw new IllegalStateException("the primary context of GPU " + device.ordinal() + " is released");
        }
        Cuda.check("cuCtxSetCurrent", cuda_h.cuCtxSetCurrent(handle));
    }

    /** Like {@link #makeCurrent()} but also while the context is closing its resources. */
    void makeCurrentForClose() {
        Cuda.check("cuCtxSetCurrent", cuda_h.cuCtxSetCurrent(handle));
    }

    /** Waits until all work queued in this context is done ({@code cuCtxSynchronize}). */
    public void synchronize() {
        makeCurrent();
        Cuda.check("cuCtxSynchronize", cuda_h.cuCtxSynchronize());
    }

    // ================================================================ making resources

    /**
     * Allocates device memory ({@code cuMemAlloc}). Its address is aligned to at least 256 bytes.
     *
     * @param bytes how many, positive
     * @return the buffer, owned by the caller
     * @throws CudaException {@code CUDA_ERROR_OUT_OF_MEMORY}, ...
     */
    public DeviceBuffer allocate(long bytes) {
        positive(bytes, "bytes");
        makeCurrent();
        long address;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Cuda.check("cuMemAlloc_v2", cuda_h.cuMemAlloc_v2(out, bytes));
            address = out.get(JAVA_LONG, 0);
        }
        return adopt(new DeviceBuffer(this, address, bytes));
    }

    /**
     * Allocates page-locked host memory ({@code cuMemHostAlloc} with {@code CU_MEMHOSTALLOC_PORTABLE},
     * so every context may use it for fast and asynchronous copies).
     *
     * @param bytes how many, positive
     * @return the memory, owned by the caller
     */
    public PinnedHostMemory allocatePinned(long bytes) {
        return allocatePinned(bytes, PinnedHostMemory.PORTABLE);
    }

    /**
     * Allocates page-locked host memory ({@code cuMemHostAlloc}).
     *
     * @param bytes how many, positive
     * @param flags {@link PinnedHostMemory#PORTABLE}, {@link PinnedHostMemory#DEVICE_MAP},
     *              {@link PinnedHostMemory#WRITE_COMBINED}, or'ed
     * @return the memory, owned by the caller
     */
    public PinnedHostMemory allocatePinned(long bytes, int flags) {
        positive(bytes, "bytes");
        makeCurrent();
        MemorySegment p;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Cuda.check("cuMemHostAlloc", cuda_h.cuMemHostAlloc(out, bytes, flags));
            p = out.get(ADDRESS, 0);
        }
        return adopt(new PinnedHostMemory(this, p, bytes, flags));
    }

    /**
     * Page-locks existing host memory ({@code cuMemHostRegister} with
     * {@code CU_MEMHOSTREGISTER_PORTABLE}) so that copies to and from it are fast and can be
     * asynchronous. The memory stays the caller's: it must stay valid until the registration is
     * closed ({@code cuMemHostUnregister}), and close does not free it.
     *
     * @param memory native memory (not a heap segment), not empty
     * @return the registration, owned by the caller
     * @throws CudaException {@code CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED} when (part of) the range
     *                       is registered already, ...
     */
    public HostRegistration register(MemorySegment memory) {
        return register(memory, HostRegistration.PORTABLE);
    }

    /**
     * Page-locks existing host memory ({@code cuMemHostRegister}).
     *
     * @param memory native memory, not empty
     * @param flags  {@link HostRegistration#PORTABLE}, {@link HostRegistration#DEVICE_MAP},
     *               {@link HostRegistration#READ_ONLY}, or'ed
     * @return the registration, owned by the caller
     */
    public HostRegistration register(MemorySegment memory, int flags) {
        requireNative(memory, "memory");
        positive(memory.byteSize(), "memory.byteSize()");
        makeCurrent();
        Cuda.check("cuMemHostRegister_v2", cuda_h.cuMemHostRegister_v2(memory, memory.byteSize(), flags));
        return adopt(new HostRegistration(this, memory, flags));
    }

    /**
     * Creates a stream that does not synchronise with the legacy default stream
     * ({@code cuStreamCreate} with {@code CU_STREAM_NON_BLOCKING}).
     *
     * @return the stream, owned by the caller
     */
    public CudaStream createStream() {
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Cuda.check("cuStreamCreate", cuda_h.cuStreamCreate(out, cuda_h.CU_STREAM_NON_BLOCKING()));
            return adopt(new CudaStream(this, out.get(ADDRESS, 0)));
        }
    }

    /**
     * Creates an event ({@code cuEventCreate}).
     *
     * @param timing true for an event that records time ({@link CudaEvent#elapsedMillis}); false for a
     *               cheaper one that only orders and signals ({@code CU_EVENT_DISABLE_TIMING})
     * @return the event, owned by the caller
     */
    public CudaEvent createEvent(boolean timing) {
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int flags = timing ? cuda_h.CU_EVENT_DEFAULT() : cuda_h.CU_EVENT_DISABLE_TIMING();
            Cuda.check("cuEventCreate", cuda_h.cuEventCreate(out, flags));
            return adopt(new CudaEvent(this, out.get(ADDRESS, 0), timing));
        }
    }

    // ================================================================ copies by address

    /**
     * Copies all of {@code src} to device memory at {@code dst} ({@code cuMemcpyHtoD}); returns when
     * the copy is done.
     *
     * @param dst device address (a {@link DeviceBuffer#address()} plus an offset)
     * @param src native host memory
     */
    public void copyHostToDevice(long dst, MemorySegment src) {
        requireNative(src, "src");
        makeCurrent();
        Cuda.check("cuMemcpyHtoD_v2", cuda_h.cuMemcpyHtoD_v2(dst, src, src.byteSize()));
    }

    /**
     * Fills all of {@code dst} from device memory at {@code src} ({@code cuMemcpyDtoH}); returns when
     * the copy is done.
     *
     * @param dst native host memory
     * @param src device address
     */
    public void copyDeviceToHost(MemorySegment dst, long src) {
        requireNative(dst, "dst");
        makeCurrent();
        Cuda.check("cuMemcpyDtoH_v2", cuda_h.cuMemcpyDtoH_v2(dst, src, dst.byteSize()));
    }

    /**
     * Copies {@code length} bytes between device addresses ({@code cuMemcpyDtoD}); returns when the
     * copy is queued (device-to-device copies are asynchronous to the host even here).
     */
    public void copyDeviceToDevice(long dst, long src, long length) {
        nonNegative(length, "length");
        makeCurrent();
        Cuda.check("cuMemcpyDtoD_v2", cuda_h.cuMemcpyDtoD_v2(dst, src, length));
    }

    /**
     * Queues a copy of all of {@code src} to device address {@code dst} on {@code stream}
     * ({@code cuMemcpyHtoDAsync}). {@code src} must stay valid and unchanged until the stream has run
     * the copy; it is truly asynchronous only for pinned memory.
     */
    public void copyHostToDeviceAsync(long dst, MemorySegment src, CudaStream stream) {
        requireNative(src, "src");
        MemorySegment s = streamOf(stream);
        makeCurrent();
        Cuda.check("cuMemcpyHtoDAsync_v2", cuda_h.cuMemcpyHtoDAsync_v2(dst, src, src.byteSize(), s));
    }

    /**
     * Queues a copy from device address {@code src} into all of {@code dst} on {@code stream}
     * ({@code cuMemcpyDtoHAsync}). Read {@code dst} only after the stream has run the copy (an event or
     * {@link CudaStream#synchronize()}); it is truly asynchronous only for pinned memory.
     */
    public void copyDeviceToHostAsync(MemorySegment dst, long src, CudaStream stream) {
        requireNative(dst, "dst");
        MemorySegment s = streamOf(stream);
        makeCurrent();
        Cuda.check("cuMemcpyDtoHAsync_v2", cuda_h.cuMemcpyDtoHAsync_v2(dst, src, dst.byteSize(), s));
    }

    /** Queues a copy of {@code length} bytes between device addresses on {@code stream} ({@code cuMemcpyDtoDAsync}). */
    public void copyDeviceToDeviceAsync(long dst, long src, long length, CudaStream stream) {
        nonNegative(length, "length");
        MemorySegment s = streamOf(stream);
        makeCurrent();
        Cuda.check("cuMemcpyDtoDAsync_v2", cuda_h.cuMemcpyDtoDAsync_v2(dst, src, length, s));
    }

    /**
     * What the driver knows about an address ({@code cuPointerGetAttributes}): whether it is device
     * memory, of which GPU, and the allocation it lies in. Never fails for an address the driver does
     * not know: that gives {@link PointerInfo#UNKNOWN_MEMORY}.
     *
     * @param address any address
     * @return its description
     */
    public PointerInfo pointerInfo(long address) {
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attrs = arena.allocate(JAVA_INT, 4);
            attrs.setAtIndex(JAVA_INT, 0, cuda_h.CU_POINTER_ATTRIBUTE_MEMORY_TYPE());
            attrs.setAtIndex(JAVA_INT, 1, cuda_h.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL());
            attrs.setAtIndex(JAVA_INT, 2, cuda_h.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR());
            attrs.setAtIndex(JAVA_INT, 3, cuda_h.CU_POINTER_ATTRIBUTE_RANGE_SIZE());
            MemorySegment type = arena.allocate(JAVA_INT);
            MemorySegment ordinal = arena.allocate(JAVA_INT);
            ordinal.set(JAVA_INT, 0, -1);
            MemorySegment start = arena.allocate(JAVA_LONG);
            MemorySegment size = arena.allocate(JAVA_LONG);
            MemorySegment data = arena.allocate(ADDRESS, 4);
            data.setAtIndex(ADDRESS, 0, type);
            data.setAtIndex(ADDRESS, 1, ordinal);
            data.setAtIndex(ADDRESS, 2, start);
            data.setAtIndex(ADDRESS, 3, size);
            Cuda.check("cuPointerGetAttributes", cuda_h.cuPointerGetAttributes(4, attrs, data, address));
            return new PointerInfo(address, type.get(JAVA_INT, 0), ordinal.get(JAVA_INT, 0),
                    start.get(JAVA_LONG, 0), size.get(JAVA_LONG, 0));
        }
    }

    /**
     * Exports device memory as a dma-buf file descriptor ({@code cuMemGetHandleForAddressRange} with
     * {@code CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD}), which a NIC registers with
     * {@code ibv_reg_dmabuf_mr}.
     *
     * @param address device address from {@code cuMemAlloc}, aligned to the host page size
     * @param length  bytes, a positive multiple of the host page size
     * @return the descriptor, owned by the caller (close it once the NIC registration exists)
     * @throws IllegalArgumentException when address or length is not page aligned
     * @throws CudaException            {@code CUDA_ERROR_NOT_SUPPORTED} where the device or driver cannot
     *                                  export dma-bufs, ...
     */
    public DmaBuf exportDmaBuf(long address, long length) {
        positive(length, "length");
        long page = DmaBuf.PAGE_SIZE;
        if (address % page != 0 || length % page != 0) {
            throw new IllegalArgumentException("dma-buf export needs an address and a length aligned to the host"
                    + " page size (" + page + "): address 0x" + Long.toHexString(address) + ", length " + length);
        }
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fd = arena.allocate(JAVA_INT);
            Cuda.check("cuMemGetHandleForAddressRange", cuda_h.cuMemGetHandleForAddressRange(fd, address, length,
                    cuda_h.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD(), 0L));
            return new DmaBuf(fd.get(JAVA_INT, 0), address, length);
        }
    }

    // ================================================================ lifetime

    private <T extends CudaResource> T adopt(T resource) {
        synchronized (resources) {
            if (!closed.get()) {
                resources.add(resource);
                return resource;
            }
        }
        resource.close(); // the context closed meanwhile: do not leak what was just made
        throw new IllegalStateException("the primary context of GPU " + device.ordinal() + " is released");
    }

    void forget(CudaResource resource) {
        synchronized (resources) {
            resources.remove(resource);
        }
    }

    /**
     * Closes every resource made from this context that is still open, newest first, then releases
     * this reference to the primary context ({@code cuDevicePrimaryCtxRelease}). Once; later calls
     * return at once.
     *
     * @throws CudaException the first driver error met (the others are suppressed on it); everything
     *                       is released anyway
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<CudaResource> open;
        synchronized (resources) {
            open = new ArrayList<>(resources);
        }
        RuntimeException failure = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        int rc = cuda_h.cuDevicePrimaryCtxRelease_v2(device.handle());
        if (rc != 0) {
            CudaException e = new CudaException("cuDevicePrimaryCtxRelease_v2", rc, Cuda.errorName(rc), Cuda.errorString(rc));
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    // ================================================================ checks

    static MemorySegment streamOf(CudaStream stream) {
        Objects.requireNonNull(stream, "stream");
        return stream.handleForUse();
    }

    static void requireNative(MemorySegment segment, String what) {
        Objects.requireNonNull(segment, what);
        if (!segment.isNative()) {
            throw new IllegalArgumentException(what + " must be native (off-heap) memory: the driver cannot copy"
                    + " to or from a Java heap segment");
        }
    }

    static void positive(long value, String what) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive: " + value);
        }
    }

    static void nonNegative(long value, String what) {
        if (value < 0) {
            throw new IllegalArgumentException(what + " must not be negative: " + value);
        }
    }

    @Override
    public String toString() {
        return "CudaContext[GPU " + device.ordinal() + (closed.get() ? ", released" : "") + "]";
    }
}
