package dev.rdmarpc.rpc.gpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The double-buffering discipline without a GPU: an engine that runs queued copies only when a slot
 * is awaited (as late as a real stream may), so reading a slot before its copy finished, or refilling
 * a slot before the stream has read it, gives wrong bytes.
 */
class DoubleBufferTest {
    private static final int CHUNK = 4096;

    /** A lazy in-order "stream" over host memory posing as device memory. */
    static final class LazyEngine implements DoubleBuffer.Engine {
        final MemorySegment device;
        final MemorySegment[] slots;
        final ArrayDeque<Runnable> stream = new ArrayDeque<>();
        final int[] pendingPerSlot = new int[2];
        int maxQueued;

        LazyEngine(Arena arena, long deviceBytes) {
            device = arena.allocate(deviceBytes);
            slots = new MemorySegment[] {arena.allocate(CHUNK), arena.allocate(CHUNK)};
        }

        @Override
        public int chunkSize() {
            return CHUNK;
        }

        @Override
        public MemorySegment slot(int slot) {
            return slots[slot];
        }

        @Override
        public void deviceToSlot(long src, int slot, long length) {
            pendingPerSlot[slot]++;
            stream.add(() -> {
                MemorySegment.copy(device, src, slots[slot], 0, length);
                pendingPerSlot[slot]--;
            });
            maxQueued = Math.max(maxQueued, stream.size());
        }

        @Override
        public void slotToDevice(int slot, long dst, long length) {
            pendingPerSlot[slot]++;
            stream.add(() -> {
                MemorySegment.copy(slots[slot], 0, device, dst, length);
                pendingPerSlot[slot]--;
            });
            maxQueued = Math.max(maxQueued, stream.size());
        }

        @Override
        public void awaitSlot(int slot) {
            while (pendingPerSlot[slot] > 0) {
                stream.poll().run();
            }
        }
    }

    private static void pattern(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 131 + seed + (i >> 12)));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 5 * CHUNK + 77})
    void toHostCopiesEveryByteAndReportsEachChunk(long length) {
        try (Arena arena = Arena.ofConfined()) {
            LazyEngine e = new LazyEngine(arena, length + 64);
            pattern(e.device, 3);
            MemorySegment dst = arena.allocate(length + 100);
            List<Long> ready = new ArrayList<>();
            DoubleBuffer.toHost(e, 64, dst, 100, length, ready::add);
            assertEquals(-1, dst.asSlice(100, length).mismatch(e.device.asSlice(64, length)));
            long chunks = (length + CHUNK - 1) / CHUNK;
            assertEquals(chunks, ready.size(), "one report per chunk: " + ready);
            for (int i = 0; i < ready.size(); i++) {
                assertEquals(Math.min((i + 1L) * CHUNK, length), ready.get(i));
            }
            assertTrue(e.stream.isEmpty());
            if (chunks > 1) {
                assertTrue(e.maxQueued >= 2, "the next chunk is queued before the current one is awaited");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 5 * CHUNK + 77})
    void toDeviceCopiesEveryByteAndWaitsForTheLast(long length) {
        try (Arena arena = Arena.ofConfined()) {
            LazyEngine e = new LazyEngine(arena, length + 64);
            MemorySegment src = arena.allocate(length + 100);
            pattern(src, 9);
            DoubleBuffer.toDevice(e, src, 100, 64, length);
            assertTrue(e.stream.isEmpty(), "returns only when the device holds every byte");
            assertEquals(-1, e.device.asSlice(64, length).mismatch(src.asSlice(100, length)));
            if (length > CHUNK) {
                assertTrue(e.maxQueued >= 2, "two chunks in flight");
            }
        }
    }

    @Test
    void emptyCopiesReportZeroAndQueueNothing() {
        try (Arena arena = Arena.ofConfined()) {
            LazyEngine e = new LazyEngine(arena, 16);
            List<Long> ready = new ArrayList<>();
            DoubleBuffer.toHost(e, 0, arena.allocate(1), 0, 0, ready::add);
            DoubleBuffer.toDevice(e, arena.allocate(1), 0, 0, 0);
            assertEquals(List.of(0L), ready);
            assertEquals(0, e.maxQueued);
        }
    }
}
