package dev.rdmarpc.rpc.gpu;

import java.lang.foreign.MemorySegment;
import java.util.function.LongConsumer;

/**
 * Chunked double buffering between device memory and any host memory through two pinned staging
 * slots on one stream: while the stream copies chunk k+1 into (or out of) one slot, the host copies
 * chunk k out of (or into) the other, and the bytes done so far are reported for sending. Kept apart
 * from CUDA ({@link Engine}) so the slot discipline is tested without a GPU.
 */
final class DoubleBuffer {
    private DoubleBuffer() {
    }

    /** The asynchronous copies the algorithm drives: two slots, one in-order stream, one event per slot. */
    interface Engine {
        /** @return the bytes of one slot */
        int chunkSize();

        /** @return the host memory of slot 0 or 1 ({@link #chunkSize()} bytes) */
        MemorySegment slot(int slot);

        /** Queues a copy of {@code length} device bytes from {@code src} into {@code slot}, then marks the slot. */
        void deviceToSlot(long src, int slot, long length);

        /** Queues a copy of {@code length} bytes of {@code slot} to device address {@code dst}, then marks the slot. */
        void slotToDevice(int slot, long dst, long length);

        /** Waits until the last copy queued for {@code slot} is done. */
        void awaitSlot(int slot);
    }

    /**
     * Copies {@code length} device bytes from {@code src} into {@code dst} at {@code dstOffset},
     * reporting each finished chunk through {@code ready} (bytes done so far).
     */
    static void toHost(Engine e, long src, MemorySegment dst, long dstOffset, long length, LongConsumer ready) {
        if (length == 0) {
            ready.accept(0);
            return;
        }
        int chunk = e.chunkSize();
        long issued = Math.min(chunk, length);
        e.deviceToSlot(src, 0, issued);
        long done = 0;
        for (int k = 0; done < length; k++) {
            int slot = k & 1;
            if (issued < length) {
                // The other slot held chunk k-1, which the previous iteration already copied out.
                long next = Math.min(chunk, length - issued);
                e.deviceToSlot(src + issued, slot ^ 1, next);
                issued += next;
            }
            long len = Math.min(chunk, length - done);
            e.awaitSlot(slot);
            MemorySegment.copy(e.slot(slot), 0, dst, dstOffset + done, len);
            done += len;
            ready.accept(done);
        }
    }

    /**
     * Copies {@code length} bytes of {@code src} from {@code srcOffset} to device address {@code dst},
     * returning when the device holds all of them.
     */
    static void toDevice(Engine e, MemorySegment src, long srcOffset, long dst, long length) {
        int chunk = e.chunkSize();
        long done = 0;
        int k = 0;
        for (; done < length; k++) {
            int slot = k & 1;
            if (k >= 2) {
                e.awaitSlot(slot); // the copy of chunk k-2 must have read the slot before it is refilled
            }
            long len = Math.min(chunk, length - done);
            MemorySegment.copy(src, srcOffset + done, e.slot(slot), 0, len);
            e.slotToDevice(slot, dst + done, len);
            done += len;
        }
        if (k > 0) {
            e.awaitSlot((k - 1) & 1); // the stream runs in order: the last chunk done means all are
        }
    }
}
