package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.core.Counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The client's call table on its own (no connection, no socket): ids and slots, deadlines swept,
 * waiting for a slot, and the close.
 */
class CallTableTest {
    private static final Method<Integer, Integer> M = Method.of("m", Codecs.INT, Codecs.INT);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private record Swept(Object sink, long tag, String method, long elapsed, long inPlaceId) {
    }

    private static List<Swept> sweep(CallTable t, long now) {
        List<Swept> out = new ArrayList<>();
        t.sweep(now, (sink, tag, m, elapsed, inPlaceId) -> out.add(new Swept(sink, tag, m.name(), elapsed, inPlaceId)));
        return out;
    }

    @Test
    void anIdNamesItsSlotAndAFreedSlotComesBackWithANewId() {
        Counters metrics = new Counters();
        CallTable t = new CallTable(metrics, 2);
        Object sink = new Object();
        long a = t.reserve(sink, 7, M, 100, SECOND, false);
        assertEquals(1, t.outstanding());
        assertEquals(100, t.outstandingBytesHint());
        assertEquals(1, metrics.inFlight());
        assertSame(sink, t.sink(a));
        assertTrue(t.release(a));
        assertFalse(t.release(a), "freed once");
        assertNull(t.sink(a), "an ended call's id finds nothing");
        long b = t.reserve(sink, 7, M, 100, SECOND, false);
        assertEquals(a & 0xFFFF, b & 0xFFFF, "last freed slot first");
        assertNotEquals(a, b, "a new sequence: a late response to the old call is not the new one's");
        assertNull(t.sink(a));
        assertEquals(100, t.outstandingBytesHint(), "the freed call's bytes are no longer counted");
    }

    @Test
    void aFullTableRefusesAtOnceOrAfterTheWait() {
        CallTable t = new CallTable(new Counters(), 1);
        t.reserve(null, 0, M, 10, SECOND, false);
        assertEquals(-1, t.reserve(null, 0, M, 10, SECOND, false));
        assertEquals(-1, t.reserveUntil(null, M, 10, System.nanoTime() + SECOND));
        long start = System.nanoTime();
        assertEquals(-1, t.reserveWaiting(null, M, 10, start + TimeUnit.MILLISECONDS.toNanos(50), start + SECOND));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "it waited");
    }

    @Test
    void aWaiterTakesTheSlotAnotherCallFrees() throws Exception {
        CallTable t = new CallTable(new Counters(), 1);
        long first = t.reserve(null, 0, M, 10, SECOND, false);
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(
                () -> t.reserveWaiting("second", M, 10, System.nanoTime() + 5 * SECOND, System.nanoTime() + 5 * SECOND));
        Thread.sleep(50);
        assertFalse(waiter.isDone(), "waits for the slot");
        assertTrue(t.release(first));
        long second = waiter.get(5, TimeUnit.SECONDS);
        assertTrue(second > 0);
        assertEquals("second", t.sink(second));
    }

    @Test
    void takeTellsWhatTheSlotHeldAndWhetherItsDeadlinePassed() {
        CallTable t = new CallTable(new Counters(), 4);
        Object sink = new Object();
        long now = System.nanoTime();
        long id = t.reserveUntil(sink, M, 64, now + SECOND);
        CallTable.Taken taken = new CallTable.Taken();
        assertTrue(t.take(id, now, taken));
        assertSame(sink, taken.sink);
        assertSame(M, taken.method);
        assertEquals(64, taken.requestBytes);
        assertFalse(taken.pastDeadline);
        assertFalse(t.take(id, now, taken), "taken once");
        long late = t.reserveUntil(sink, M, 64, now + SECOND);
        assertTrue(t.take(late, now + SECOND, taken));
        assertTrue(taken.pastDeadline, "at its deadline");
        assertEquals(0, t.outstanding());
    }

    @Test
    void theSweepFreesOnlyTheCallsPastTheirDeadline() {
        CallTable t = new CallTable(new Counters(), 8);
        long now = System.nanoTime();
        long early = t.reserveUntil("early", M, 1, now + 10);
        long later = t.reserveUntil("later", M, 1, now + 1000 * MS);
        long inPlace = t.reserve("inPlace", 5, M, 1, 10, true);
        assertTrue(sweep(t, now).isEmpty(), "nothing due");
        List<Swept> swept = sweep(t, now + 500 * MS);
        assertEquals(2, swept.size());
        assertEquals("early", swept.get(0).sink());
        assertEquals(0, swept.get(0).inPlaceId());
        Swept ip = swept.get(1);
        assertEquals("inPlace", ip.sink());
        assertEquals(5, ip.tag());
        assertEquals(inPlace, ip.inPlaceId(), "a call read in place is named, to be detached");
        assertNull(t.sink(early));
        assertEquals("later", t.sink(later));
        assertTrue(sweep(t, now + 999 * MS).isEmpty(), "the next deadline is later");
        assertEquals("later", sweep(t, now + 1000 * MS).get(0).sink());
        assertFalse(t.hasHeld());
    }

    @Test
    void theCloseHandsBackEveryCallAndRefusesLaterOnesWithItsStatus() {
        Counters metrics = new Counters();
        CallTable t = new CallTable(metrics, 4);
        t.reserve("a", 1, M, 1, SECOND, false);
        t.reserve("b", 2, M, 1, SECOND, false);
        CallTable.Pending pending = t.closeAll(Status.PERMISSION_DENIED, "refused");
        assertEquals(List.of("a", "b"), List.of(pending.sinks()));
        assertEquals(0, t.outstanding());
        assertEquals(0, metrics.inFlight());
        RpcException e = assertThrows(RpcException.class, () -> t.reserve("c", 0, M, 1, SECOND, false));
        assertEquals(Status.PERMISSION_DENIED, e.status());
        assertEquals("refused", e.getMessage());
        assertTrue(t.isClosed());
    }

    @Test
    void aCloseWakesACallerWaitingForASlot() throws Exception {
        CallTable t = new CallTable(new Counters(), 1);
        t.reserve(null, 0, M, 1, SECOND, false);
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(
                () -> t.reserveWaiting(null, M, 1, System.nanoTime() + 10 * SECOND, System.nanoTime() + 10 * SECOND));
        Thread.sleep(50);
        t.closeAll(Status.CONNECTION_CLOSED, "server closed the connection");
        Exception e = assertThrows(Exception.class, () -> waiter.get(5, TimeUnit.SECONDS));
        assertEquals(Status.CONNECTION_CLOSED, ((RpcException) e.getCause()).status());
    }

    @Test
    void onlyAnIdleTableClosesAsIdle() {
        CallTable t = new CallTable(new Counters(), 2);
        long since = System.nanoTime();
        t.claim();
        assertFalse(t.closeIfIdleSince(since + SECOND), "claimed by a pool's pick");
        t.unclaim();
        long id = t.reserve(null, 0, M, 1, SECOND, false);
        assertFalse(t.closeIfIdleSince(System.nanoTime() + SECOND), "a call outstanding");
        t.release(id);
        assertFalse(t.closeIfIdleSince(since), "a call started since");
        assertTrue(t.closeIfIdleSince(System.nanoTime()));
        assertFalse(t.closeIfIdleSince(System.nanoTime()), "closed once");
        assertEquals("connection closed after being idle", t.closedErrorNow().getMessage());
    }

    @Test
    void capacityOutsideTheSlotFieldIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new CallTable(new Counters(), 0));
        assertThrows(IllegalArgumentException.class, () -> new CallTable(new Counters(), CallTable.MAX_OUTSTANDING + 1));
    }
}
