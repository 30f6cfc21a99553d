package dev.rdmarpc.cuda;

/**
 * What the driver knows about an address ({@link CudaContext#pointerInfo(long)}).
 *
 * @param address       the address asked about
 * @param memoryType    the {@code CUmemorytype}: {@link #HOST_MEMORY}, {@link #DEVICE_MEMORY},
 *                      {@link #ARRAY_MEMORY}, {@link #UNIFIED_MEMORY}, or {@link #UNKNOWN_MEMORY} for an
 *                      address the driver does not know (ordinary pageable host memory)
 * @param deviceOrdinal the GPU the memory belongs to, -1 when unknown
 * @param rangeStart    the first address of the allocation holding {@code address}, 0 when unknown
 * @param rangeSize     the size of that allocation, 0 when unknown
 */
public record PointerInfo(long address, int memoryType, int deviceOrdinal, long rangeStart, long rangeSize) {
    /** Not memory the driver knows. */
    public static final int UNKNOWN_MEMORY = 0;
    /** {@code CU_MEMORYTYPE_HOST}: pinned or registered host memory. */
    public static final int HOST_MEMORY = 1;
    /** {@code CU_MEMORYTYPE_DEVICE}: device memory ({@code cuMemAlloc}). */
    public static final int DEVICE_MEMORY = 2;
    /** {@code CU_MEMORYTYPE_ARRAY}. */
    public static final int ARRAY_MEMORY = 3;
    /** {@code CU_MEMORYTYPE_UNIFIED}: managed memory. */
    public static final int UNIFIED_MEMORY = 4;

    /** @return true for device memory */
    public boolean isDevice() {
        return memoryType == DEVICE_MEMORY;
    }

    /**
     * @param length bytes from {@link #address()}
     * @return true when {@code [address, address + length)} lies inside the allocation
     */
    public boolean covers(long length) {
        return rangeSize > 0 && length >= 0 && address >= rangeStart && address - rangeStart <= rangeSize - length;
    }
}
