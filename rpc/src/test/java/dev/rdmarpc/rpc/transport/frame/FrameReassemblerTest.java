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
            FrameReassembler r = new FrameReassembler(pool);
            assertFalse(r.active());
            assertTrue(r.start(frame, 0, CHUNK, length));
            assertTrue(r.active());
            assertEquals(length - CHUNK, r.missing());
            assertFalse(r.append(frame, CHUNK, CHUNK));
            assertFalse(r.append(frame, 2 * CHUNK, CHUNK));
            assertEquals(100, r.missing());
            assertTrue(r.append(frame, 3 * CHUNK, 100), "whole with the last piece");
            assertEquals(length, r.frameLength());
            PooledBuffer b = r.take();
            assertFalse(r.active());
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame));
            assertEquals(1, pool.largeBuffersInUse());
            b.release();
            assertEquals(0, pool.largeBuffersInUse());
        }
    }

    @Test
    void readsInPlaceAreCountedUntilTheFrameIsWhole() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            int length = 2 * CHUNK + 10;
            MemorySegment frame = pattern(arena, length);
            FrameReassembler r = new FrameReassembler(pool);
            assertTrue(r.start(frame, 0, 100, length));
            ByteBuffer target = r.readTarget();
            assertEquals(100, target.position());
            assertEquals(length, target.limit());
            target.put(frame.asSlice(100, CHUNK).asByteBuffer()); // what a socket read would do
            assertFalse(r.advance(CHUNK));
            target = r.readTarget();
            assertEquals(100 + CHUNK, target.position());
            target.put(frame.asSlice(100 + CHUNK, length - 100 - CHUNK).asByteBuffer());
            assertTrue(r.advance(length - 100 - CHUNK));
            PooledBuffer b = r.take();
            assertEquals(-1, b.segment().asSlice(0, length).mismatch(frame));
            b.release();
        }
    }

    @Test
    void releaseGivesAnUnfinishedFrameBackOnce() {
        try (BufferPool pool = pool(); Arena arena = Arena.ofConfined()) {
            FrameReassembler r = new FrameReassembler(pool);
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
            FrameReassembler r = new FrameReassembler(pool);
            assertFalse(r.start(pattern(arena, CHUNK), 0, CHUNK, 2 << 20), "larger than maxLargeBytes");
            assertFalse(r.active());
        }
    }
}
