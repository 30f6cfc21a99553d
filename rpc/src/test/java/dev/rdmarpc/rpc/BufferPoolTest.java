package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.buffer.Slab;
import dev.rdmarpc.rpc.buffer.SlabListener;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BufferPoolTest {
    static final class RecordingListener implements SlabListener {
        final List<Slab> created = new ArrayList<>();
        final List<Slab> freed = new ArrayList<>();

        @Override
        public void slabCreated(Slab slab) {
            created.add(slab);
            slab.setRegistration("mr-" + created.size());
        }

        @Override
        public void slabFreed(Slab slab) {
            assertTrue(slab.segment().scope().isAlive(), "listener runs before the memory is freed");
            freed.add(slab);
        }
    }

    @Test
    void chunksComeFromSlabsRegisteredOnce() {
        RecordingListener l = new RecordingListener();
        BufferPool pool = BufferPool.create(new BufferPool.Config().chunkSize(4096).slabSize(16384).maxPooledBytes(32768)
                .slabListener(l));
        List<PooledBuffer> held = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            PooledBuffer b = pool.acquire();
            assertNotNull(b);
            assertEquals(4096, b.capacity());
            assertEquals(0, b.segment().address() % 4096, "chunks of an aligned slab are aligned");
            assertTrue(b.slabOffset() >= 0 && b.slabOffset() < 16384);
            assertNotNull(b.slab().registration());
            b.segment().set(ValueLayout.JAVA_INT, 0, i);
            held.add(b);
        }
        assertEquals(2, l.created.size(), "two slabs for eight chunks");
        assertNull(pool.acquire(), "exhausted: null, not an exception");
        assertEquals(1, pool.acquireFailures());
        assertEquals(8, pool.highWaterMark());
        for (PooledBuffer b : held) {
            b.release();
        }
        assertEquals(0, pool.chunksInUse());
        // Reuse does not create slabs.
        for (int i = 0; i < 100; i++) {
            pool.acquire().release();
        }
        assertEquals(2, l.created.size());
        assertEquals(8, pool.highWaterMark());
        pool.close();
        assertEquals(l.created.size(), l.freed.size());
        assertTrue(l.created.stream().noneMatch(s -> s.segment().scope().isAlive()));
        pool.close(); // idempotent
        assertThrows(IllegalStateException.class, pool::acquire);
    }

    @Test
    void doubleReleaseIsDetected() {
        try (BufferPool pool = BufferPool.create()) {
            PooledBuffer b = pool.acquire();
            b.release();
            assertThrows(IllegalStateException.class, b::release);
        }
    }

    @Test
    void largeBuffersAreBoundedAndCached() {
        RecordingListener l = new RecordingListener();
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().chunkSize(4096).maxLargeBytes(1 << 20).slabListener(l))) {
            PooledBuffer small = pool.acquire(100);
            assertFalse(small.isLarge());
            PooledBuffer big = pool.acquire(300_000);
            assertTrue(big.isLarge());
            assertTrue(big.capacity() >= 300_000);
            assertEquals(1, pool.largeBuffersInUse());
            assertNull(pool.acquire(900_000), "over the large budget");
            big.release();
            PooledBuffer again = pool.acquire(260_000);
            assertSame(big, again, "a released large buffer is reused");
            assertEquals(1, pool.largeAllocations());
            again.release();
            small.release();
            assertThrows(IllegalArgumentException.class, () -> pool.acquire(-1));
        }
    }

    @Test
    void byteBufferViewIsCachedPerBuffer() {
        try (BufferPool pool = BufferPool.create()) {
            PooledBuffer b = pool.acquire();
            assertSame(b.byteBuffer(), b.byteBuffer());
            assertEquals(b.capacity(), b.byteBuffer().capacity());
            b.release();
        }
    }

    @Test
    void invalidConfigIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> BufferPool.create(new BufferPool.Config().chunkSize(3000)));
        assertThrows(IllegalArgumentException.class, () -> BufferPool.create(new BufferPool.Config().chunkSize(4096).slabSize(5000)));
        assertThrows(IllegalArgumentException.class, () -> BufferPool.create(new BufferPool.Config().maxPooledBytes(10)));
        assertThrows(IllegalArgumentException.class, () -> BufferPool.create(new BufferPool.Config().alignment(3)));
    }

    @Test
    void failingListenerMeansExhaustionNotUnregisteredMemory() {
        SlabListener failing = new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                throw new IllegalStateException("registration failed");
            }

            @Override
            public void slabFreed(Slab slab) {
            }
        };
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().slabListener(failing))) {
            assertNull(pool.acquire());
            assertEquals(1, pool.acquireFailures());
            assertEquals(0, pool.slabCount());
        }
    }
}
