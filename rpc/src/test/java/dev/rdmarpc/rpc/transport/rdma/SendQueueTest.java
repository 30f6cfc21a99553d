package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Coalescing, fragmentation and the window of the send side, without a device. */
class SendQueueTest {
    private static final int CHUNK = 4096;
    private final BufferPool pool = BufferPool.create(new BufferPool.Config().chunkSize(CHUNK).slabSize(16 * CHUNK)
            .maxPooledBytes(64 * CHUNK).maxLargeBytes(1 << 20));

    @AfterEach
    void close() {
        pool.close();
    }

    private static void put(SendQueue q, int length, byte fill) {
        long at = q.claim(length);
        assertTrue(at >= 0, "claim " + length + " -> " + at);
        q.claimBuffer().asSlice(at, length).fill(fill);
        q.commit();
    }

    @Test
    void smallFramesQueuedBehindAFullWindowShareOneMessage() {
        SendQueue q = new SendQueue(pool, 1, CHUNK);
        put(q, 100, (byte) 1);
        int s0 = q.take();
        assertEquals(0, s0);
        assertEquals(100, q.takenLength());
        assertTrue(q.windowFull());
        for (int i = 0; i < 10; i++) {
            put(q, 200, (byte) (2 + i));
        }
        assertEquals(-1, q.take(), "window full");
        assertEquals(100 + 2000, q.pendingBytes());
        q.completed(s0);
        int s1 = q.take();
        assertEquals(2000, q.takenLength(), "ten frames coalesced into one message");
        MemorySegment seg = q.takenBuffer().segment();
        for (int i = 0; i < 10; i++) {
            assertEquals((byte) (2 + i), seg.get(ValueLayout.JAVA_BYTE, q.takenOffset() + i * 200L));
        }
        assertFalse(q.hasQueued());
        q.completed(s1);
        assertEquals(0, q.pendingBytes());
        assertEquals(0, pool.chunksInUse(), "every chunk back in the pool");
    }

    @Test
    void aTakenMessageIsSealedAgainstAppends() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        put(q, 100, (byte) 1);
        int s0 = q.take();
        put(q, 100, (byte) 2);
        int s1 = q.take();
        assertEquals(100, q.takenLength());
        assertEquals(2, pool.chunksInUse(), "second frame got a chunk of its own");
        assertEquals(s0 + 1, s1, "slots are handed out in ring order");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> q.completed(s1),
                "completions come in order");
        q.completed(s0);
        q.completed(s1);
        assertEquals(0, pool.chunksInUse());
    }

    @Test
    void largeFrameLeavesAsMessagesPointingIntoOneBuffer() {
        int len = 3 * CHUNK + 10;
        SendQueue q = new SendQueue(pool, 2, CHUNK);
        put(q, len, (byte) 7);
        PooledBuffer large = null;
        int[] lengths = new int[4];
        int[] slots = new int[4];
        for (int i = 0; i < 2; i++) {
            slots[i] = q.take();
            lengths[i] = q.takenLength();
            large = large == null ? q.takenBuffer() : large;
            assertSame(large, q.takenBuffer());
            assertEquals(i * CHUNK, q.takenOffset());
        }
        assertEquals(-1, q.take());
        q.completed(slots[0]);
        assertEquals(1, pool.largeBuffersInUse(), "not released before its last message completes");
        slots[2] = q.take();
        lengths[2] = q.takenLength();
        q.completed(slots[1]);
        slots[3] = q.take();
        lengths[3] = q.takenLength();
        assertEquals(10, lengths[3]);
        assertEquals(len, lengths[0] + lengths[1] + lengths[2] + lengths[3]);
        assertFalse(q.hasQueued());
        q.completed(slots[2]);
        assertEquals(1, pool.largeBuffersInUse());
        q.completed(slots[3]);
        assertEquals(0, pool.largeBuffersInUse());
        assertEquals(0, q.pendingBytes());
    }

    @Test
    void framesBetweenChunkAndMessageSizeAreFragmentedToo() {
        SendQueue q = new SendQueue(pool, 4, 1024); // the peer's buffers are smaller than ours
        put(q, 3000, (byte) 1);
        int s0 = q.take();
        assertEquals(1024, q.takenLength());
        q.take();
        q.take();
        assertEquals(3000 - 2048, q.takenLength());
        assertFalse(q.hasQueued());
        q.completed(s0);
    }

    @Test
    void abortGivesAFreshBufferBack() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        long at = q.claim(100);
        assertEquals(0, at);
        q.abort();
        assertEquals(0, pool.chunksInUse());
        assertFalse(q.hasQueued());
        put(q, 100, (byte) 1);
        long at2 = q.claim(50);
        assertEquals(100, at2, "appended");
        q.abort();
        assertEquals(1, pool.chunksInUse(), "the shared chunk stays");
        int s = q.take();
        assertEquals(100, q.takenLength(), "the aborted bytes are not sent");
        q.completed(s);
    }

    @Test
    void backPressureAndExhaustionAreReturnCodes() {
        try (BufferPool roomy = BufferPool.create(new BufferPool.Config().chunkSize(CHUNK).slabSize(64 * CHUNK)
                .maxPooledBytes(512L * CHUNK))) {
            SendQueue q = new SendQueue(roomy, 1, CHUNK);
            for (int i = 0; i < SendQueue.ENTRIES; i++) {
                put(q, 3000, (byte) 1); // 3000 + 3000 > one message: one entry each
            }
            assertEquals(Connection.BACK_PRESSURED, q.claim(3000), "every entry is queued");
            assertTrue(q.claim(1000) >= 0, "a small frame still fits in the last entry");
            q.abort();
            q.close();
            assertEquals(Connection.CLOSED, q.claim(10));
            assertEquals(0, roomy.chunksInUse(), "close releases what the device never saw");
        }
        SendQueue big = new SendQueue(pool, 1, CHUNK);
        long r;
        int n = 0;
        while ((r = big.claim(CHUNK)) >= 0) {
            big.commit();
            n++;
        }
        assertEquals(Connection.NO_BUFFER, r);
        assertTrue(n > 0);
        big.close();
        assertEquals(0, pool.chunksInUse(), "close releases what the device never saw");
    }

    @Test
    void closeKeepsAPartlySentBufferUntilReleaseInFlight() {
        SendQueue q = new SendQueue(pool, 1, CHUNK);
        put(q, 2 * CHUNK + 1, (byte) 1);
        q.take();
        q.close();
        assertEquals(1, pool.largeBuffersInUse(), "the device may still read it");
        q.releaseInFlight();
        assertEquals(0, pool.largeBuffersInUse());
        assertEquals(0, q.pendingBytes());
    }

    @Test
    void aZeroCopyTailIsCutIntoMessagesAfterTheHead() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        long tailAddress = 0x10_0000L;
        int head = 100;
        int tail = 10_000;
        long at = q.claimWithTail(head + tail, tailAddress, tail, 77, null);
        assertEquals(0, at);
        q.claimBuffer().asSlice(0, head).fill((byte) 3);
        q.commit();
        assertEquals(head + tail, q.pendingBytes());
        assertTrue(q.claim(10) >= 0, "a later frame gets its own entry");
        q.abort();
        int s0 = q.take();
        assertEquals(CHUNK, q.takenLength());
        assertEquals(head, q.takenHeadLength());
        assertEquals(CHUNK - head, q.takenTailLength());
        assertEquals(tailAddress, q.takenTailAddress());
        assertEquals(77, q.takenTailLkey());
        q.take();
        assertEquals(0, q.takenHeadLength());
        assertEquals(tailAddress + CHUNK - head, q.takenTailAddress());
        q.take();
        assertEquals(head + tail - 2 * CHUNK, q.takenTailLength());
        assertEquals(tailAddress + 2L * CHUNK - head, q.takenTailAddress());
        assertFalse(q.hasQueued());
        assertEquals(1, pool.chunksInUse(), "only the head took a buffer");
        q.completed(s0);
        q.completed(s0 + 1);
        q.completed(s0 + 2);
        assertEquals(0, pool.chunksInUse());
        assertEquals(0, q.pendingBytes());
    }

    /** Registered memory that is not registered anywhere: only its frames' uses are counted. */
    private static DeviceTable.UserRegion region() {
        return new DeviceTable.UserRegion(java.lang.foreign.Arena.ofAuto().allocate(1 << 16), -1);
    }

    private static long claimTail(SendQueue q, DeviceTable.UserRegion r, int head, int tail) {
        assertTrue(r.tryUse(), "the sender takes a use before it claims");
        long at = q.claimWithTail(head + tail, r.segment.address(), tail, 77, r);
        assertTrue(at >= 0);
        return at;
    }

    /** A frame's use of its tail's registration ends when its last message completes, not before. */
    @Test
    void aTailsRegistrationIsUsedUntilTheFramesLastMessageCompletes() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        DeviceTable.UserRegion r = region();
        claimTail(q, r, 100, 10_000);
        q.commit();
        assertEquals(1, r.inUse(), "queued");
        int s0 = q.take();
        q.take();
        q.take();
        assertEquals(1, r.inUse(), "in flight");
        q.completed(s0);
        q.completed(s0 + 1);
        assertEquals(1, r.inUse(), "the last message, with the rest of the tail, is still in flight");
        q.completed(s0 + 2);
        assertEquals(0, r.inUse());
    }

    @Test
    void anAbortedOrDroppedFrameGivesItsUseBack() {
        SendQueue q = new SendQueue(pool, 1, CHUNK);
        DeviceTable.UserRegion r = region();
        claimTail(q, r, 100, 5_000);
        q.abort();
        assertEquals(0, r.inUse(), "aborted");
        put(q, 10, (byte) 1);
        q.take(); // the window (1) is full now: what follows stays queued
        claimTail(q, r, 100, 5_000);
        q.commit();
        claimTail(q, r, 100, 5_000);
        q.commit();
        assertEquals(2, r.inUse());
        q.close();
        assertEquals(0, r.inUse(), "queued frames the device never saw are dropped at close");
    }

    @Test
    void aFramePartlyInFlightKeepsItsUseUntilReleaseInFlight() {
        SendQueue q = new SendQueue(pool, 1, CHUNK);
        DeviceTable.UserRegion r = region();
        claimTail(q, r, 100, 10_000);
        q.commit();
        q.take();
        q.close();
        assertEquals(1, r.inUse(), "the device may still read its first message, and later ones were never posted");
        q.releaseInFlight();
        assertEquals(0, r.inUse());
    }

    @Test
    void aRendezvousFramesUseGoesToItsTaker() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        q.rendezvous(3 * CHUNK);
        DeviceTable.UserRegion r = region();
        claimTail(q, r, 100, 4 * CHUNK);
        q.commit();
        int slot = q.takeRendezvous();
        assertSame(r, q.takenTailRegion());
        q.completed(slot); // the descriptor's completion gives nothing back: the frame is the taker's now
        assertEquals(1, r.inUse());
        q.takenBuffer().release();
        r.unuse(); // what Rendezvous does once the peer read it and its windows were invalidated
        assertEquals(0, r.inUse());
    }

    /** Closing refuses new uses at once and waits for the ones held; the wait ends with the last. */
    @Test
    void closingARegistrationWaitsForItsFrames() throws Exception {
        DeviceTable.UserRegion r = region();
        assertTrue(r.tryUse());
        assertTrue(r.tryUse());
        r.refuseUses();
        assertFalse(r.tryUse(), "no new frame takes it once closing started");
        assertEquals(2, r.inUse());
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread waiter = Thread.ofPlatform().start(() -> {
            r.awaitUnused(Long.MAX_VALUE);
            done.countDown();
        });
        assertFalse(done.await(200, java.util.concurrent.TimeUnit.MILLISECONDS), "two frames still use it");
        r.unuse();
        assertFalse(done.await(200, java.util.concurrent.TimeUnit.MILLISECONDS), "one frame still uses it");
        r.unuse();
        assertTrue(done.await(10, java.util.concurrent.TimeUnit.SECONDS), "the last frame let it go");
        waiter.join();
        assertEquals(0, r.inUse());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, r::unuse, "given back more than taken");
    }

    /** A bounded wait says whether the frames let the registration go in time; the queue knows which it holds. */
    @Test
    void aBoundedWaitForARegistrationEndsInTimeAndTheQueueSaysWhetherItHoldsIt() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        DeviceTable.UserRegion r = region();
        DeviceTable.UserRegion other = region();
        assertFalse(q.holds(r));
        claimTail(q, r, 100, 2 * CHUNK);
        q.commit();
        assertTrue(q.holds(r), "the committed frame holds its tail's registration");
        assertFalse(q.holds(other));
        r.refuseUses();
        long t0 = System.nanoTime();
        assertFalse(r.awaitUnused(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200)), "a frame still uses it");
        long ms = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms >= 190 && ms < 5000, "waited " + ms + " ms for 200");
        q.close(); // the queue pair is gone: the frame is dropped and gives its use back
        assertFalse(q.holds(r));
        assertTrue(r.awaitUnused(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200)));
        assertEquals(0, r.inUse());
    }

    @Test
    void aRendezvousFrameIsTakenWholeAndItsBufferOutlivesItsDescriptor() {
        SendQueue q = new SendQueue(pool, 4, CHUNK);
        q.rendezvous(3 * CHUNK);
        put(q, 100, (byte) 1);                 // small: a message of its own
        put(q, 3 * CHUNK, (byte) 2);           // at the threshold: rendezvous, never coalesced
        put(q, 50, (byte) 3);                  // after it: a new entry, not appended to the rendezvous one
        assertFalse(q.headIsRendezvous());
        int s0 = q.take();
        assertEquals(100, q.takenLength());
        assertTrue(q.headIsRendezvous());
        int s1 = q.takeRendezvous();
        assertEquals(3 * CHUNK, q.takenLength(), "taken whole, not cut into messages of " + CHUNK);
        assertEquals(3 * CHUNK, q.takenHeadLength());
        PooledBuffer frame = q.takenBuffer();
        assertTrue(frame.segment().byteSize() >= 3 * CHUNK + Rendezvous.MAX_DESCRIPTOR, "room for the descriptor");
        assertEquals((byte) 2, frame.segment().get(ValueLayout.JAVA_BYTE, 3 * CHUNK - 1));
        int s2 = q.take();
        assertEquals(50, q.takenLength());
        assertEquals(100 + 3 * CHUNK + 50, q.pendingBytes());
        q.completed(s0);
        q.completed(s1);
        assertEquals(50, q.pendingBytes(), "the frame's bytes stop counting when its descriptor is sent");
        q.completed(s2);
        assertEquals(0, q.pendingBytes());
        assertEquals(1, pool.largeBuffersInUse() + pool.chunksInUse(), "the frame is the caller's until the peer read it");
        frame.release();
        assertEquals(0, pool.largeBuffersInUse() + pool.chunksInUse());
    }

    @Test
    void belowTheRendezvousThresholdFramesAreSplitAsBefore() {
        SendQueue q = new SendQueue(pool, 8, CHUNK);
        q.rendezvous(3 * CHUNK);
        put(q, 3 * CHUNK - 1, (byte) 4);
        assertFalse(q.headIsRendezvous());
        int taken = 0;
        while (q.take() >= 0) {
            taken++;
        }
        assertEquals(3, taken, "three messages of at most one chunk");
    }
}
