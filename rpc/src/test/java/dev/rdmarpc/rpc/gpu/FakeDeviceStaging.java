package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.DeviceStaging;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * A {@link DeviceStaging} whose "device memory" is host memory it hands out itself, so the RPC core's
 * device-attachment path (validation, held commits, chunked progress, landing in a provided buffer,
 * failures) runs end to end over TCP without a GPU. Copies go in chunks and report progress like the
 * real staging; hooks let a test pause after a chunk or fail mid-copy.
 */
final class FakeDeviceStaging implements DeviceStaging, AutoCloseable {
    /** Called after each chunk of a copy to host has been reported ready. */
    interface ChunkHook {
        void afterChunk(long done, long length);
    }

    final int deviceId;
    private final int chunk;
    private final Arena arena = Arena.ofShared();
    private final List<MemorySegment> regions = new CopyOnWriteArrayList<>();
    volatile ChunkHook hook = (done, length) -> { };
    volatile int failAfterChunks = -1;
    final AtomicInteger copiesToHost = new AtomicInteger();
    final AtomicInteger copiesToDevice = new AtomicInteger();

    FakeDeviceStaging(int deviceId, int chunk) {
        this.deviceId = deviceId;
        this.chunk = chunk;
    }

    /** "Device memory" of {@code bytes}. */
    MemorySegment allocate(long bytes) {
        MemorySegment s = arena.allocate(bytes, 256);
        regions.add(s);
        return s;
    }

    Attachment attachment(MemorySegment deviceMemory) {
        return Attachment.device(deviceId, deviceMemory.address(), deviceMemory.byteSize(), this);
    }

    private MemorySegment region(long address, long length) {
        for (MemorySegment r : regions) {
            long off = address - r.address();
            if (off >= 0 && off <= r.byteSize() - length) {
                return r.asSlice(off, length);
            }
        }
        return null;
    }

    @Override
    public void validate(int id, long address, long length) {
        if (id != deviceId) {
            throw new IllegalArgumentException("fake GPU " + deviceId + " got an attachment of GPU " + id);
        }
        if (region(address, length) == null) {
            throw new IllegalArgumentException("[0x" + Long.toHexString(address) + ", +" + length + ") is not fake device memory");
        }
    }

    @Override
    public void copyToHost(long src, MemorySegment dst, long dstOffset, long length, LongConsumer ready) {
        copiesToHost.incrementAndGet();
        MemorySegment from = region(src, length);
        long done = 0;
        int chunks = 0;
        while (done < length) {
            if (chunks == failAfterChunks) {
                throw new IllegalStateException("fake GPU copy failed after " + chunks + " chunks");
            }
            long n = Math.min(chunk, length - done);
            MemorySegment.copy(from, done, dst, dstOffset + done, n);
            done += n;
            chunks++;
            ready.accept(done);
            hook.afterChunk(done, length);
        }
    }

    @Override
    public void copyToDevice(MemorySegment src, long srcOffset, long dst, long length) {
        copiesToDevice.incrementAndGet();
        MemorySegment.copy(src, srcOffset, region(dst, length), 0, length);
    }

    @Override
    public void close() {
        arena.close();
    }
}
