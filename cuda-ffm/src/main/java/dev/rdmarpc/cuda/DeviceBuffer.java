package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Device memory from {@code cuMemAlloc}: {@link #byteSize()} bytes at device address
 * {@link #address()}, freed ({@code cuMemFree}) by {@link #close()} (see {@link CudaResource} for
 * ownership and threads). Offsets are checked against the size; host memory must be native.
 *
 * <p>The synchronous copies return when the bytes have arrived; the {@code Async} ones queue the copy
 * on a stream and return at once, so the host memory involved must stay valid and unchanged until the
 * stream has run them (pinned memory for true asynchrony: {@link PinnedHostMemory},
 * {@link HostRegistration}).
 */
public final class DeviceBuffer extends CudaResource {
    private final long address;
    private final long size;

    DeviceBuffer(CudaContext context, long address, long size) {
        super(context);
        this.address = address;
        this.size = size;
    }

    /** @return the device address ({@code CUdeviceptr}) of the first byte */
    public long address() {
        return address;
    }

    /** @return the size in bytes */
    public long byteSize() {
        return size;
    }

    /** @return the GPU's ordinal */
    public int deviceOrdinal() {
        return context().device().ordinal();
    }

    /**
     * Copies all of {@code src} into this buffer at {@code offset} ({@code cuMemcpyHtoD}).
     *
     * @throws IndexOutOfBoundsException when it does not fit
     */
    public void copyFromHost(MemorySegment src, long offset) {
        check(offset, Objects.requireNonNull(src, "src").byteSize());
        enter();
        context().copyHostToDevice(address + offset, src);
    }

    /** Fills all of {@code dst} from this buffer at {@code offset} ({@code cuMemcpyDtoH}). */
    public void copyToHost(long offset, MemorySegment dst) {
        check(offset, Objects.requireNonNull(dst, "dst").byteSize());
        enter();
        context().copyDeviceToHost(dst, address + offset);
    }

    /** Copies {@code length} bytes of {@code src} from {@code srcOffset} into this buffer at {@code offset} ({@code cuMemcpyDtoD}). */
    public void copyFromDevice(DeviceBuffer src, long srcOffset, long offset, long length) {
        src.check(srcOffset, length);
        check(offset, length);
        enter();
        context().copyDeviceToDevice(address + offset, src.address + srcOffset, length);
    }

    /** Queues {@link #copyFromHost} on {@code stream} ({@code cuMemcpyHtoDAsync}). */
    public void copyFromHostAsync(MemorySegment src, long offset, CudaStream stream) {
        check(offset, Objects.requireNonNull(src, "src").byteSize());
        enter();
        context().copyHostToDeviceAsync(address + offset, src, stream);
    }

    /** Queues {@link #copyToHost} on {@code stream} ({@code cuMemcpyDtoHAsync}). */
    public void copyToHostAsync(long offset, MemorySegment dst, CudaStream stream) {
        check(offset, Objects.requireNonNull(dst, "dst").byteSize());
        enter();
        context().copyDeviceToHostAsync(dst, address + offset, stream);
    }

    /** Queues {@link #copyFromDevice} on {@code stream} ({@code cuMemcpyDtoDAsync}). */
    public void copyFromDeviceAsync(DeviceBuffer src, long srcOffset, long offset, long length, CudaStream stream) {
        src.check(srcOffset, length);
        check(offset, length);
        enter();
        context().copyDeviceToDeviceAsync(address + offset, src.address + srcOffset, length, stream);
    }

    /** Sets {@code length} bytes from {@code offset} to {@code value} ({@code cuMemsetD8}). */
    public void fill(long offset, long length, byte value) {
        check(offset, length);
        enter();
        Cuda.check("cuMemsetD8_v2", cuda_h.cuMemsetD8_v2(address + offset, value, length));
    }

    /**
     * Exports the whole buffer as a dma-buf ({@link CudaContext#exportDmaBuf}); its address and size
     * must be aligned to the host page size.
     */
    public DmaBuf exportDmaBuf() {
        enter();
        return context().exportDmaBuf(address, size);
    }

    private void check(long offset, long length) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + offset + " + " + length
                    + ") outside a device buffer of " + size + " bytes");
        }
    }

    @Override
    void free() {
        Cuda.check("cuMemFree_v2", cuda_h.cuMemFree_v2(address));
    }

    @Override
    String what() {
        return "device buffer of " + size + " bytes on GPU " + deviceOrdinal();
    }

    @Override
    public String toString() {
        return "DeviceBuffer[GPU " + deviceOrdinal() + ", 0x" + Long.toHexString(address) + ", " + size + " bytes"
                + (isClosed() ? ", closed" : "") + "]";
    }
}
