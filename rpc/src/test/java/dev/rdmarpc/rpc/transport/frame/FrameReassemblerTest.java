package dev.rdmarpc.rpc.transport.frame;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The one reassembler of both transports: pieces appended (RDMA) or read in place (TCP), and what it gives back. */
class FrameReassemblerTest {
    private static final int CHUNK = 4096;

    private static BufferPool pool() {
        return BufferPool.create(new BufferPool.Config().chunkSize(CHUNK).slabSize(4 * CHUNK).maxPooledBytes(4 * CHUNK)
                .maxLargeBytes(1 << 20));
    }

    private static MemorySegment pattern(Arena arena, int length) {
        MemorySegment s = arena.allocate(length);
        for (int i = 0; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        return s;
    }

    @Test
    void appendedPiecesMakeTheWholeFrame() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            int length = 3 * CHUNK + 100;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool, true);
            assertFalse(r.active());
            assertTrue(r.start(frame, 0, CHUNK, length));
            assertTrue(r.active());
            assertEquals(length - CHUNK, r.missing());
            assertEquals(length, r.room(), "four times the first piece covers the frame");
            assertTrue(r.ensureRoom(CHUNK));
            assertFalse(r.append(frame, CHUNK, CHUNK));
            assertTrue(r.ensureRoom(CHUNK));
            assertFalse(r.append(frame, 2 * CHUNK, CHUNK));
            assertEquals(100, r.missing());
            assertTrue(r.ensureRoom(100));
            assertTrue(r.append(frame, 3 * CHUNK, 100), "whole with the last piece");
            assertEquals(length, r.frameLength());
            assertEquals(0, r.growths());
            PooledBuffer b = r.take();
            assertFalse(r.active());
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame));
            assertEquals(1, pool.largeBuffersInUse());
            b.release();
            assertEquals(0, pool.largeBuffersInUse());
        }
    }

    @Test
    void theBufferGrowsWithTheBytesThatArrivedNotWithTheDeclaredLength() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            int length = 64 * CHUNK + 7;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool, true);
            assertTrue(r.start(frame, 0, CHUNK, length));
            assertEquals(16385, r.room(), "the plan: 256 KiB + 7, a quarter of it, a quarter of that: 16,385 bytes");
            assertEquals(20480, pool.largeBytesInUse(), "a declared 256 KiB holds 20 KiB (16,385 bytes in 4 KiB pages)");
            int filled = CHUNK;
            while (filled < length) {
                int n = Math.min(CHUNK, length - filled);
                assertTrue(r.ensureRoom(n));
                // never room for more than 4.5 times the bytes that arrived (and the pool's eighth over that)
                assertTrue(r.room() <= (long) FrameReassembler.GROWTH * (filled + n) * 9 / 8,
                        r.room() + " planned for " + (filled + n) + " bytes");
                assertTrue(pool.largeBytesInUse() <= (long) r.room() * 9 / 8 + 4096, pool.largeBytesInUse() + " held"); // the pool's rounding
                assertEquals(1, pool.largeBuffersInUse(), "a full buffer goes back when its successor takes over");
                assertEquals(filled + n == length, r.append(frame, filled, n));
                filled += n;
            }
            assertEquals(2, r.growths(), "16,385 -> 65,538 -> the frame's 262,151 bytes");
            assertEquals(FrameReassembler.buffersFor(length, CHUNK), r.growths() + 1);
            assertEquals(4L * CHUNK + 16L * CHUNK, r.copiedBytes(), "what each full buffer held, copied once");
            assertTrue(r.copiedBytes() <= length / (FrameReassembler.GROWTH - 1));
            PooledBuffer b = r.take();
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame), "the bytes survive every move");
            b.release();
            assertEquals(0, pool.largeBuffersInUse());
        }
    }

    @Test
    void aClientsReassemblerTakesTheWholeFrameAtOnce() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            int length = 64 * CHUNK + 7;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool, false);
            assertTrue(r.start(frame, 0, CHUNK, length));
            assertEquals(length, r.room());
            for (int filled = CHUNK; filled < length; filled += CHUNK) {
                int n = Math.min(CHUNK, length - filled);
                assertTrue(r.ensureRoom(n));
                r.append(frame, filled, n);
            }
            assertEquals(0, r.growths(), "no copies");
            PooledBuffer b = r.take();
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame));
            b.release();
        }
    }

    @Test
    void readsInPlaceAreCountedUntilTheFrameIsWhole() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            int length = 2 * CHUNK + 10;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool, true);
            assertTrue(r.start(frame, 0, 100, length));
            assertTrue(r.ensureRoom(1));
            ByteBuffer target = r.readTarget();
            assertEquals(100, target.position());
            assertEquals(129, target.limit(), "the plan 8,202 / 2,051 / 513 / 129: the largest at most 4.5 times 100");
            int filled = 100;
            while (true) {
                assertTrue(r.ensureRoom(1));
                target = r.readTarget();
                assertEquals(filled, target.position());
                int n = Math.min(target.remaining(), 1000); // what a socket read would do
                target.put(frame.asSlice(filled, n).asByteBuffer());
                filled += n;
                if (r.advance(n)) {
                    break;
                }
            }
            assertEquals(length, filled);
            assertTrue(r.growths() > 0);
            PooledBuffer b = r.take();
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame));
            b.release();
        }
    }

    @Test
    void aBufferThePoolCannotGrowKeepsWhatArrived() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            PooledBuffer other = pool.acquire(512 << 10); // half the budget is someone else's
            int length = 768 << 10;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool, true);
            assertTrue(r.start(frame, 0, CHUNK, length), "the first 16 KiB fit");
            int filled = CHUNK;
            boolean grew = true;
            while (grew && filled < length) {
                grew = r.ensureRoom(CHUNK);
                if (grew) {
                    r.append(frame, filled, CHUNK);
                    filled += CHUNK;
                }
            }
            assertFalse(grew, "768 KiB do not fit beside the other 512 KiB of a 1 MiB budget");
            assertEquals(192 << 10, r.room(), "the plan 768 / 192 / 48 / 12 KiB got as far as 192");
            assertEquals(length - filled, r.missing(), "what arrived is kept");
            r.release();
            other.release();
            assertEquals(0, pool.largeBuffersInUse());
        }
    }

    @Test
    void releaseGivesAnUnfinishedFrameBackOnce() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            FrameReassembler r = new FrameReassembler(pool, true);
            assertTrue(r.start(pattern(arena, CHUNK), 0, CHUNK, 4 * CHUNK));
            assertEquals(1, pool.largeBuffersInUse());
            r.release();
            r.release();
            assertEquals(0, pool.largeBuffersInUse());
            assertFalse(r.active());
            assertNull(r.take());
        }
    }

    @Test
    void aFrameThePoolCannotHoldStartsNothing() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            FrameReassembler r = new FrameReassembler(pool, true);
            assertFalse(r.start(pattern(arena, CHUNK), 0, CHUNK, 2 << 20), "larger than maxLargeBytes");
            assertFalse(r.active());
        }
    }
}
