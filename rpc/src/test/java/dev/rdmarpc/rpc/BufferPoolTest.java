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
            PooledBuffer again = pool.acquire(299_000); // the same size class (an eighth of a power of two)
            assertSame(big, again, "a released large buffer is reused");
            assertEquals(1, pool.largeAllocations());
            again.release();
            small.release();
            assertThrows(IllegalArgumentException.class, () -> pool.acquire(-1));
        }
    }

    @Test
    void aLargeBufferIsAtMostAnEighthLargerThanAsked() {
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().maxLargeBytes(64L << 20))) {
            PooledBuffer eightMiBFrame = pool.acquire((8 << 20) + 24);
            assertEquals(9L << 20, eightMiBFrame.capacity(), "9 MiB for an 8 MiB payload and its header, not 16 MiB");
            PooledBuffer exact = pool.acquire(8 << 20);
            assertEquals(8L << 20, exact.capacity());
            for (int n : new int[] {65_537, 100_000, 1 << 20, 3_000_001, 15_000_000}) {
                PooledBuffer b = pool.acquire(n);
                assertTrue(b.capacity() >= n && b.capacity() <= n + n / 8 + 4096, n + " -> " + b.capacity());
                b.release();
            }
            eightMiBFrame.release();
            exact.release();
        }
    }

    @Test
    void everyReleasedLargeBufferWithinTheBudgetIsReused() {
        // 64 calls of 1 MiB in flight need 64 large buffers: a cache of a few would allocate and free
        // (and for RDMA register and deregister) most of them on every round
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().maxLargeBytes(128L << 20))) {
            for (int round = 0; round < 3; round++) {
                List<PooledBuffer> held = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    held.add(pool.acquire((1 << 20) + 24));
                }
                held.forEach(PooledBuffer::release);
            }
            assertEquals(64, pool.largeAllocations(), "one allocation per buffer in flight, none per round");
        }
    }

    @Test
    void idleMemoryIsGivenBackAfterTheIdleTime() throws InterruptedException {
        RecordingListener l = new RecordingListener();
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().chunkSize(4096).slabSize(16384)
                .idleRelease(java.time.Duration.ofMillis(200)).slabListener(l))) {
            List<PooledBuffer> held = new ArrayList<>();
            for (int i = 0; i < 12; i++) { // three slabs
                held.add(pool.acquire());
            }
            PooledBuffer big = pool.acquire(1 << 20);
            assertEquals(4, l.created.size());
            long before = pool.reservedBytes();
            PooledBuffer keep = held.remove(11); // keeps its slab in use
            for (PooledBuffer b : held) {
                b.release();
            }
            big.release();
            long now = System.nanoTime();
            assertEquals(0, pool.trim(now + 1_100_000_000L - 200_000_000L), "nothing idle long enough yet is freed");
            Thread.sleep(250);
            long freed = pool.trim(System.nanoTime() + 2_000_000_000L);
            // the cached large buffer, and one of the two idle slabs (the first slab is kept); not the slab in use
            assertEquals((1 << 20) + 16384, freed, pool::toString);
            assertEquals(before - freed, pool.reservedBytes());
            assertEquals(freed, pool.trimmedBytes());
            assertEquals(2, l.freed.size());
            assertFalse(l.freed.contains(keep.slab()), "a slab with a chunk in use is kept");
            assertEquals(0, pool.trim(System.nanoTime() + 2_100_000_000L), "at most one look a second");
            // what is left works: chunks of the kept slabs, and new slabs when those run out
            List<PooledBuffer> again = new ArrayList<>();
            for (int i = 0; i < 7; i++) { // the two kept slabs' free chunks
                PooledBuffer b = pool.acquire();
                assertNotNull(b);
                assertFalse(l.freed.contains(b.slab()), "no chunk of a freed slab is handed out");
                again.add(b);
            }
            assertEquals(4, l.created.size(), "the kept slabs' chunks are all still there");
            again.add(pool.acquire());
            assertEquals(5, l.created.size(), "a new slab once they are taken");
            again.forEach(PooledBuffer::release);
            keep.release();
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
