package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One GPU as the driver sees it: its ordinal, name, PCI bus id, memory, and whether it can hand its
 * memory to a NIC (dma-buf, GPUDirect RDMA). An immutable value read once from the driver; it owns
 * nothing, so there is nothing to close. Thread-safe.
 * {@snippet :
 * for (CudaDevice gpu : CudaDevice.all()) {
 *     System.out.println(gpu);   // GPU 0: NVIDIA H200 (0000:1b:00.0, 140 GiB, dma-buf yes, GPUDirect RDMA yes)
 * }
 * try (CudaContext ctx = CudaDevice.get(0).retainPrimaryContext();
 *      DeviceBuffer buf = ctx.allocate(1 << 20)) {
 *     buf.copyFromHost(hostSegment, 0);
 * }
 * }
 */
public final class CudaDevice {
    private final int ordinal;
    private final int handle;
    private final String name;
    private final String pciBusId;
    private final long totalMemory;
    private final boolean dmaBuf;
    private final boolean gpuDirectRdma;
    private final int ccMajor;
    private final int ccMinor;

    private CudaDevice(int ordinal, int handle, String name, String pciBusId, long totalMemory, boolean dmaBuf,
                       boolean gpuDirectRdma, int ccMajor, int ccMinor) {
        this.ordinal = ordinal;
        this.handle = handle;
        this.name = name;
        this.pciBusId = pciBusId;
        this.totalMemory = totalMemory;
        this.dmaBuf = dmaBuf;
        this.gpuDirectRdma = gpuDirectRdma;
        this.ccMajor = ccMajor;
        this.ccMinor = ccMinor;
    }

    /**
     * How many GPUs the driver sees ({@code cuDeviceGetCount}).
     *
     * @throws CudaDriverNotFoundException without {@code libcuda.so.1}
     * @throws CudaException               when the driver fails ({@code CUDA_ERROR_NO_DEVICE}, ...)
     */
    public static int count() {
        Cuda.init();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = arena.allocate(JAVA_INT);
            Cuda.check("cuDeviceGetCount", cuda_h.cuDeviceGetCount(n));
            return n.get(JAVA_INT, 0);
        }
    }

    /**
     * The GPU with this ordinal, its properties read from the driver now.
     *
     * @param ordinal 0 to {@link #count()} - 1
     * @throws CudaDriverNotFoundException without {@code libcuda.so.1}
     * @throws CudaException               {@code CUDA_ERROR_INVALID_DEVICE} for an ordinal out of range
     */
    public static CudaDevice get(int ordinal) {
        Cuda.init();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            Cuda.check("cuDeviceGet", cuda_h.cuDeviceGet(out, ordinal));
            int dev = out.get(JAVA_INT, 0);
            MemorySegment text = arena.allocate(256);
            Cuda.check("cuDeviceGetName", cuda_h.cuDeviceGetName(text, (int) text.byteSize(), dev));
            String name = text.getString(0);
            Cuda.check("cuDeviceGetPCIBusId", cuda_h.cuDeviceGetPCIBusId(text, (int) text.byteSize(), dev));
            String bus = text.getString(0);
            MemorySegment bytes = arena.allocate(JAVA_LONG);
            Cuda.check("cuDeviceTotalMem_v2", cuda_h.cuDeviceTotalMem_v2(bytes, dev));
            return new CudaDevice(ordinal, dev, name, bus, bytes.get(JAVA_LONG, 0),
                    attribute(arena, cuda_h.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED(), dev) != 0,
                    attribute(arena, cuda_h.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED(), dev) != 0,
                    attribute(arena, cuda_h.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR(), dev),
                    attribute(arena, cuda_h.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR(), dev));
        }
    }

    /**
     * Every GPU the driver sees, by ordinal.
     *
     * @throws CudaDriverNotFoundException without {@code libcuda.so.1}
     * @throws CudaException               when the driver fails
     */
    public static List<CudaDevice> all() {
        int n = count();
        List<CudaDevice> devices = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            devices.add(get(i));
        }
        return List.copyOf(devices);
    }

    private static int attribute(Arena arena, int attribute, int dev) {
        MemorySegment v = arena.allocate(JAVA_INT);
        Cuda.check("cuDeviceGetAttribute", cuda_h.cuDeviceGetAttribute(v, attribute, dev));
        return v.get(JAVA_INT, 0);
    }

    /**
     * Any {@code CUdevice_attribute} of this GPU ({@code cuDeviceGetAttribute}), for what this class
     * does not name.
     *
     * @param attribute a {@code CU_DEVICE_ATTRIBUTE_*} value of {@code dev.rdmarpc.cuda.raw.cuda_h}
     * @return its value
     * @throws CudaException {@code CUDA_ERROR_INVALID_VALUE} for an unknown attribute
     */
    public int attribute(int attribute) {
        try (Arena arena = Arena.ofConfined()) {
            return attribute(arena, attribute, handle);
        }
    }

    /** @return the ordinal this device was asked for with (0, 1, ...) */
    public int ordinal() {
        return ordinal;
    }

    /** @return the driver's {@code CUdevice} handle (usually equal to the ordinal) */
    public int handle() {
        return handle;
    }

    /** @return the product name ({@code cuDeviceGetName}), e.g. "NVIDIA H200" */
    public String name() {
        return name;
    }

    /** @return the PCI bus id ({@code cuDeviceGetPCIBusId}), e.g. "0000:1b:00.0" */
    public String pciBusId() {
        return pciBusId;
    }

    /** @return the device memory in bytes ({@code cuDeviceTotalMem}) */
    public long totalMemory() {
        return totalMemory;
    }

    /**
     * @return whether the device can export its memory as a dma-buf
     *         ({@code CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED}), the way a NIC registers GPU memory with
     *         {@code ibv_reg_dmabuf_mr}
     */
    public boolean supportsDmaBuf() {
        return dmaBuf;
    }

    /**
     * @return whether the device supports GPUDirect RDMA
     *         ({@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED}), i.e. a NIC may read and write its
     *         memory (through dma-buf or the peer-memory kernel module)
     */
    public boolean supportsGpuDirectRdma() {
        return gpuDirectRdma;
    }

    /** @return the compute capability, e.g. "9.0" */
    public String computeCapability() {
        return ccMajor + "." + ccMinor;
    }

    /**
     * Retains the device's primary context ({@code cuDevicePrimaryCtxRetain}). Each call takes one
     * reference, released once by {@link CudaContext#close()}.
     *
     * @return the context, owned by the caller
     * @throws CudaException when the driver refuses
     */
    public CudaContext retainPrimaryContext() {
        return CudaContext.retainPrimary(this);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CudaDevice d && d.ordinal == ordinal && d.handle == handle;
    }

    @Override
    public int hashCode() {
        return ordinal * 31 + handle;
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + ": " + name + " (" + pciBusId + ", " + (totalMemory >> 30) + " GiB, compute "
                + computeCapability() + ", dma-buf " + (dmaBuf ? "yes" : "no") + ", GPUDirect RDMA "
                + (gpuDirectRdma ? "yes" : "no") + ")";
    }
}
