package dev.rdmarpc.rpc.transport.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared I/O loop against a poller that counts what the loop asks of it. */
@Timeout(30)
class IoLoopTest {
    /** A poller with no events of its own: it counts polls and blocks on a semaphore that wake() releases. */
    static final class CountingPoller implements IoLoop.Poller {
        final AtomicInteger polls = new AtomicInteger();
        final AtomicInteger awaits = new AtomicInteger();
        final AtomicInteger ticks = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        final Semaphore wakeups = new Semaphore(0);
        volatile Thread closedOn;
        /** What {@link #hasTimedWork()} answers (the interface's default: true). */
        volatile boolean timedWork = true;

        @Override
        public boolean hasTimedWork() {
            return timedWork;
        }

        @Override
        public int pollNow() {
            polls.incrementAndGet();
            return 0;
        }

        @Override
        public int await(long timeoutMillis) {
            awaits.incrementAndGet();
            try {
                wakeups.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS);
                wakeups.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 0;
        }

        @Override
        public void wake() {
            wakeups.release();
        }

        @Override
        public void tick(long nowNanos) {
            ticks.incrementAndGet();
        }

        @Override
        public void close() {
            closes.incrementAndGet();
            closedOn = Thread.currentThread();
        }
    }

    BufferPool pool;
    IoLoop loop;
    CountingPoller poller;

    @BeforeEach
    void pool() {
        pool = BufferPool.create(new BufferPool.Config().chunkSize(4096).slabSize(1 << 20).maxPooledBytes(1 << 20));
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (loop != null) {
            loop.shutdown();
            loop.join(5_000);
        }
        pool.close();
    }

    private void start(IdleStrategy idle, Duration tick) {
        loop = new IoLoop("io-loop-test", idle, tick.toNanos(), pool);
        poller = new CountingPoller();
        loop.start(poller);
    }

    @Test
    void anIdleEventLoopBlocksInsteadOfPolling() throws Exception {
        start(IdleStrategy.event(), Duration.ofMillis(5));
        Thread.sleep(200);
        assertTrue(poller.awaits.get() >= 5, "blocked between ticks: " + poller.awaits);
        assertTrue(poller.ticks.get() >= 5, "ticked: " + poller.ticks);
        assertTrue(poller.polls.get() <= poller.awaits.get(), "polled " + poller.polls + " times, blocked " + poller.awaits);
    }

    @Test
    void aBusyPollingLoopNeverBlocks() throws Exception {
        start(IdleStrategy.busyPoll(), Duration.ofMillis(5));
        Thread.sleep(100);
        assertEquals(0, poller.awaits.get());
        assertTrue(poller.polls.get() > 1_000, "polled " + poller.polls);
        assertTrue(poller.ticks.get() >= 2, "ticked: " + poller.ticks);
    }

    @Test
    void aBackingOffLoopPollsAfterActivityThenBlocks() throws Exception {
        start(IdleStrategy.backOff(Duration.ofMillis(10)), Duration.ofMillis(500));
        Thread.sleep(100); // quiet: blocked
        int pollsBefore = poller.polls.get();
        int awaitsBefore = poller.awaits.get();
        CountDownLatch ran = new CountDownLatch(1);
        loop.execute(ran::countDown);
        assertTrue(ran.await(5, TimeUnit.SECONDS));
        Thread.sleep(200);
        // an event loop polls once or not at all after a task; a 10 ms spin polls thousands of times
        // unloaded, and a few times even where the thread gets little of those 10 ms (a loaded CI machine: 7 seen)
        assertTrue(poller.polls.get() - pollsBefore > 3, "spun after the task: " + (poller.polls.get() - pollsBefore));
        assertTrue(poller.awaits.get() > awaitsBefore, "and blocked again after the spin");
        int polls = poller.polls.get();
        Thread.sleep(100);
        assertTrue(poller.polls.get() - polls < 10, "no spinning while quiet: " + (poller.polls.get() - polls));
    }

    /**
     * A poller whose events come at a set pace, as a peer's would: one is due {@link #interval} after
     * the last (or {@link #alternate} after a request, which sets calls in flight until the next); a blocked {@link #await} returns when it is due, as a completion channel would.
     */
    static final class PacedPoller implements IoLoop.Poller {
        final AtomicInteger polls = new AtomicInteger();
        final AtomicInteger awaits = new AtomicInteger();
        final AtomicInteger events = new AtomicInteger();
        /** Events that a blocked {@link #await} returned (not found by polling). */
        final AtomicInteger eventsAfterBlocking = new AtomicInteger();
        volatile long interval;
        volatile boolean callsInFlight;
        /** When positive: events alternate between requests and responses, a response this long after its request. */
        volatile long alternate;
        private long due;

        PacedPoller(Duration interval, boolean callsInFlight) {
            this.interval = interval.toNanos();
            this.callsInFlight = callsInFlight;
            this.due = System.nanoTime() + this.interval;
        }

        private int take(long now) {
            if (now - due < 0) {
                return 0;
            }
            if (alternate > 0) {
                callsInFlight = !callsInFlight; // a request went out, or its response came
            }
            due = now + (callsInFlight && alternate > 0 ? alternate : interval);
            events.incrementAndGet();
            return 1;
        }

        @Override
        public int pollNow() {
            polls.incrementAndGet();
            return take(System.nanoTime());
        }

        @Override
        public int await(long timeoutMillis) {
            awaits.incrementAndGet();
            long until = Math.min(due, System.nanoTime() + timeoutMillis * 1_000_000L);
            for (long left; (left = until - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(left);
            }
            int n = take(System.nanoTime());
            eventsAfterBlocking.addAndGet(n);
            return n;
        }

        @Override
        public void wake() {
        }

        @Override
        public void tick(long nowNanos) {
        }

        @Override
        public void close() {
        }

        @Override
        public boolean hasCallsInFlight() {
            return callsInFlight;
        }
    }

    /** Counts of {@code p} over {@code ms} milliseconds: {events, polls, awaits, events after blocking}. */
    private static int[] during(PacedPoller p, long ms) throws InterruptedException {
        int e = p.events.get();
        int polls = p.polls.get();
        int awaits = p.awaits.get();
        int blocked = p.eventsAfterBlocking.get();
        Thread.sleep(ms);
        return new int[] {p.events.get() - e, p.polls.get() - polls, p.awaits.get() - awaits,
                p.eventsAfterBlocking.get() - blocked};
    }

    @Test
    void anAdaptiveLoopSpinsThroughAQuickPaceAndBlocksThroughASlowOne() throws Exception {
        loop = new IoLoop("io-loop-test", IdleStrategy.adaptive(Duration.ofMillis(1)), Duration.ofMillis(10).toNanos(), pool);
        PacedPoller p = new PacedPoller(Duration.ofMillis(5), false);
        loop.start(p);
        Thread.sleep(300); // about 60 stretches of 5 ms, each longer than the 1 ms most spin: learnt not to spin
        int[] slow = during(p, 300);
        assertTrue(slow[0] >= 20, "events came: " + slow[0]);
        assertTrue(slow[3] >= slow[0] * 9 / 10, "blocked for each event: " + Arrays.toString(slow));
        assertTrue(slow[1] <= 3 * slow[0], "no spinning between slow events: " + Arrays.toString(slow));
        p.interval = Duration.ofNanos(200_000).toNanos();
        Thread.sleep(300); // learnt the 200 us pace (while blocking)
        int[] quick = during(p, 300);
        assertTrue(quick[0] >= 300, "events came: " + quick[0]);
        // spinning through the 200 us gaps: almost never blocked; an event loop would block for each
        assertTrue(quick[3] * 10 <= quick[0], "blocked for at most 1 in 10 quick events: " + Arrays.toString(quick));
    }

    @Test
    void anAdaptiveLoopSpinsForResponsesWhileItBlocksBetweenRequests() throws Exception {
        // a sparse caller: a request goes out, its response comes 200 us later, the next request 5 ms
        // after that; the loop learns the two kinds of stretch apart
        loop = new IoLoop("io-loop-test", IdleStrategy.adaptive(Duration.ofMillis(1)), Duration.ofMillis(10).toNanos(), pool);
        PacedPoller p = new PacedPoller(Duration.ofMillis(5), false);
        p.alternate = Duration.ofNanos(200_000).toNanos();
        loop.start(p);
        Thread.sleep(400);
        int[] c = during(p, 600);
        assertTrue(c[0] >= 100, "events came: " + c[0]);
        // one block per request stretch, none for responses; learnt as one kind, the response stretches
        // that follow a long one are not spun either, and the loop blocks for nearly every event
        assertTrue(c[3] <= c[0] / 2 + c[0] / 10, "blocked only between requests: " + Arrays.toString(c));
        assertTrue(c[3] >= c[0] / 2 - c[0] / 10, "and not spun through 5 ms: " + Arrays.toString(c));
    }

    @Test
    void anIdleAdaptiveLoopBlocks() throws Exception {
        start(IdleStrategy.adaptive(), Duration.ofMillis(5));
        Thread.sleep(100); // at most the 2 ms most spin after starting, then blocked
        int polls = poller.polls.get();
        int awaits = poller.awaits.get();
        Thread.sleep(300);
        assertTrue(poller.polls.get() - polls < 10, "no spinning while idle: " + (poller.polls.get() - polls));
        assertTrue(poller.awaits.get() - awaits >= 20, "blocked between 5 ms ticks: " + (poller.awaits.get() - awaits));
    }

    /** Ticks counted over {@code ms} milliseconds. */
    private int ticksDuring(long ms) throws InterruptedException {
        int before = poller.ticks.get();
        Thread.sleep(ms);
        return poller.ticks.get() - before;
    }

    @Test
    void aQuietLoopWithNothingToTimeTicksAtTheIdleIntervalUntilTrafficComes() throws Exception {
        loop = new IoLoop("io-loop-test", IdleStrategy.event(), Duration.ofMillis(5).toNanos(),
                Duration.ofMillis(100).toNanos(), pool);
        poller = new CountingPoller();
        poller.timedWork = false;
        loop.start(poller);
        Thread.sleep(300); // 100 ms at the full rate, then idle ticks
        int idle = ticksDuring(500);
        assertTrue(idle <= 8, "about 5 ticks in 500 ms at the 100 ms idle interval (100 at 5 ms): " + idle);
        // traffic brings the full rate back at once, and work to time keeps it without traffic
        poller.timedWork = true;
        CountDownLatch ran = new CountDownLatch(1);
        loop.execute(ran::countDown);
        assertTrue(ran.await(5, TimeUnit.SECONDS));
        int busy = ticksDuring(500);
        assertTrue(busy >= 30, "about 100 ticks in 500 ms at 5 ms: " + busy);
        // nothing to time again: after one idle interval without traffic, back to idle ticks
        poller.timedWork = false;
        Thread.sleep(300);
        idle = ticksDuring(500);
        assertTrue(idle <= 8, "idle ticks again: " + idle);
    }

    @Test
    void anIdleTickIntervalNoLongerThanTheTickTurnsIdleTicksOff() throws Exception {
        loop = new IoLoop("io-loop-test", IdleStrategy.event(), Duration.ofMillis(5).toNanos(),
                Duration.ofMillis(1).toNanos(), pool);
        poller = new CountingPoller();
        poller.timedWork = false;
        loop.start(poller);
        Thread.sleep(200);
        int ticks = ticksDuring(500);
        assertTrue(ticks >= 30, "the full rate: " + ticks);
    }

    @Test
    void aTaskFromAnotherThreadWakesABlockedLoopAtOnce() throws Exception {
        start(IdleStrategy.event(), Duration.ofSeconds(10)); // blocks up to 1 s at a time
        Thread.sleep(50);
        long t0 = System.nanoTime();
        CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
        loop.execute(() -> onLoop.complete(loop.inLoop()));
        assertTrue(onLoop.get(5, TimeUnit.SECONDS), "the task ran on the loop's thread");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 500, "woke after " + ms + " ms, not at the 1 s timeout");
    }

    @Test
    void flushesRequestedFromAnyThreadRunOnTheLoopAndOneFailureCostsTheOthersNothing() throws Exception {
        start(IdleStrategy.event(), Duration.ofSeconds(10));
        CompletableFuture<Boolean> flushed = new CompletableFuture<>();
        IoLoop.Flushable failing = () -> {
            throw new IllegalStateException("planted");
        };
        IoLoop.Flushable good = () -> flushed.complete(loop.inLoop());
        loop.flushLater(failing);
        loop.flushLater(good);
        assertTrue(flushed.get(5, TimeUnit.SECONDS), "flushed on the loop");
        CompletableFuture<Boolean> fromLoop = new CompletableFuture<>();
        loop.execute(() -> loop.flushLater(() -> fromLoop.complete(true)));
        assertTrue(fromLoop.get(5, TimeUnit.SECONDS), "a flush requested on the loop runs at the end of its iteration");
    }

    @Test
    void shutdownClosesThePollerOnceOnTheLoop() throws Exception {
        start(IdleStrategy.event(), Duration.ofSeconds(10));
        loop.shutdown();
        loop.join(5_000);
        assertTrue(!loop.isAlive(), "the thread ended");
        assertEquals(1, poller.closes.get());
        assertEquals("io-loop-test", poller.closedOn.getName());
        loop = null;
    }
}
