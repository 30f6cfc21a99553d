package dev.rdmarpc.rpc;

import java.lang.foreign.MemorySegment;
import java.util.function.LongConsumer;

/**
 * Moves the bytes of a device-memory (GPU) {@link Attachment} between the device and the host memory
 * of a frame, for transports that carry host memory (TCP, and RDMA where the device memory is not
 * registered through {@code RdmaTransport#nicRegistrar}: there the NIC moves it). The RPC core calls it only for
 * {@link Attachment.Location#DEVICE DEVICE} attachments, so a host-only application never loads an
 * implementation (nor the CUDA driver). The implementation ships in {@code dev.rdmarpc.rpc.gpu}
 * ({@code GpuStaging}); its owner closes it after the calls that use it are over.
 *
 * <p>Thread-safety: implementations are called from any thread, concurrently; each call may block
 * until its copy is done.
 */
public interface DeviceStaging {
    /**
     * Checks, before any byte of a frame is written, that the range is device memory this staging
     * can read and write.
     *
     * @param deviceId the attachment's GPU ordinal
     * @param address  its device address
     * @param length   its length in bytes
     * @throws IllegalArgumentException when the range is not such device memory
     */
    void validate(int deviceId, long address, long length);

    /**
     * Copies {@code length} bytes from device address {@code src} into host memory {@code dst} at
     * {@code dstOffset}, returning when all have arrived. As the copy proceeds it reports, in order,
     * how many bytes from {@code dstOffset} are complete, so that the caller can send them while the
     * rest is still being copied; the last report is {@code length}.
     *
     * @param src       device address
     * @param dst       host memory (the frame being sent)
     * @param dstOffset where the bytes go
     * @param length    how many
     * @param ready     told the count of bytes complete so far (never decreasing)
     */
    void copyToHost(long src, MemorySegment dst, long dstOffset, long length, LongConsumer ready);

    /**
     * Copies {@code length} bytes of host memory {@code src} from {@code srcOffset} to device address
     * {@code dst}, returning when the device memory holds them (so {@code src} may be reused).
     *
     * @param src       host memory (a received frame)
     * @param srcOffset where the bytes start
     * @param dst       device address
     * @param length    how many
     */
    void copyToDevice(MemorySegment src, long srcOffset, long dst, long length);
}
