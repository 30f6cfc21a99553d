package dev.rdmarpc.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The open loop's schedule and its accounting, on a simulated clock: exact figures, no timing assumptions. */
@Timeout(60)
class OpenLoopTest {
    private static final long ORIGIN = 5_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final StackOptions OPTIONS = new StackOptions(1, 128, null, -1);

    @Test
    void scheduleIsExactAndDoesNotDrift() {
        Schedule s = new Schedule(100, 3);
        assertEquals(100, s.intendedNanos(0));
        assertEquals(100 + 333_333_333, s.intendedNanos(1));
        assertEquals(100 + 666_666_666, s.intendedNanos(2));
        assertEquals(100 + 1_000_000_000, s.intendedNanos(3), "whole seconds land exactly: no drift");
        assertEquals(100 + 3_600_000_000_000L, s.intendedNanos(3 * 3600), "an hour later, still exact");
        Schedule fast = new Schedule(0, Schedule.MAX_RATE);
        assertEquals(86_400_000_000_000L, fast.intendedNanos(Schedule.MAX_RATE * 86_400), "a day at the top rate, no overflow");
        // first(t): the first call due at or after t, so [first(a), first(b)) are the calls due in [a, b).
        assertEquals(0, s.first(0));
        assertEquals(0, s.first(100));
        assertEquals(1, s.first(101));
        assertEquals(1, s.first(100 + 333_333_333));
        assertEquals(2, s.first(100 + 333_333_334));
        assertEquals(3, s.first(100 + 1_000_000_000));
        Schedule k = new Schedule(ORIGIN, 1000);
        assertEquals(1000, k.first(ORIGIN + 1200 * MS) - k.first(ORIGIN + 200 * MS), "1 s at 1000/s: 1000 calls");
        for (long t = ORIGIN - 5; t < ORIGIN + 10 * MS; t += 77_777) {
            long f = k.first(t);
            assertTrue(k.intendedNanos(f) >= t && (f == 0 || k.intendedNanos(f - 1) < t), "first(" + t + ")");
        }
        assertThrows(IllegalArgumentException.class, () -> new Schedule(0, 0));
    }

    private static CellSpec open(long rate, int bound, int warmupMs, int measureMs) {
        return new CellSpec(128, 128, bound, bound, 1, Duration.ofMillis(warmupMs), Duration.ofMillis(measureMs), rate);
    }

    private static CellResult runOpen(SimClock clock, SimEchoStack stack, CellSpec spec) throws Exception {
        List<EchoConnection> connections = new ArrayList<>();
        connections.add(stack.connect(null, OPTIONS));
        return OpenLoop.run("sim", connections, spec, ProgressListener.NONE, clock);
    }

    @Test
    void sendsOnScheduleAndMeasuresFromTheDueTime() throws Exception {
        SimClock clock = new SimClock(ORIGIN);
        SimEchoStack stack = new SimEchoStack(clock, 100_000, Long.MAX_VALUE / 2, 0);
        CellResult r = runOpen(clock, stack, open(1000, 8, 200, 1000));
        assertTrue(r.openLoop());
        assertEquals(1000, r.targetQps());
        assertEquals(1000, r.calls(), "every call due in the measured second, none of the warm-up's");
        assertEquals(1000.0, r.qps(), 1e-9, "responses that arrived in the measured second");
        assertFalse(r.belowTarget());
        assertEquals(0, r.lateCalls());
        assertEquals(0, r.errors());
        assertEquals(100.0, r.p50Us(), 0.2);
        assertEquals(100.0, r.p99Us(), 0.2);
        assertEquals(1.0, r.seconds(), 1e-9);
        assertEquals(1, stack.maxOutstanding, "at 1000/s with 100 us answers, one call in flight at a time");
        assertEquals(8, stack.callers.get());
        assertEquals(8, stack.closedCallers.get(), "every caller closed after the cell");
    }

    /**
     * The server stalls for 50 ms once. Open loop: the 50 calls due during the stall all wait for it, so
     * the stall shows in the P99 of the 1000 measured calls (about 40 ms). Closed loop: only the one call in
     * flight sees it; the others were simply not sent, and the P99 stays at the 100 us service time.
     */
    @Test
    void aStallIsChargedToEveryCallItDelayedUnlikeInAClosedLoop() throws Exception {
        long stallAt = ORIGIN + 700 * MS;
        SimClock clock = new SimClock(ORIGIN);
        CellResult open = runOpen(clock, new SimEchoStack(clock, 100_000, stallAt, 50 * MS), open(1000, 64, 200, 1000));
        assertEquals(1000, open.calls());
        assertEquals(0, open.lateCalls(), "64 in flight are enough for 50 calls: all sent on time");
        assertTrue(open.p99Us() > 39_000 && open.p99Us() < 41_500, "P99 " + open.p99Us());
        assertEquals(50_100, open.maxUs(), 60, "the first call of the stall waited all of it");
        assertEquals(100.0, open.p90Us(), 0.2, "95% of the calls were not delayed");

        SimClock clock2 = new SimClock(ORIGIN);
        SimEchoStack stack2 = new SimEchoStack(clock2, 100_000, stallAt, 50 * MS);
        List<EchoConnection> connections = new ArrayList<>();
        connections.add(stack2.connect(null, OPTIONS));
        CellResult closed = ClosedLoop.run("sim", connections,
                new CellSpec(128, 128, 1, 1, 1, Duration.ofMillis(200), Duration.ofMillis(1000)), ProgressListener.NONE, clock2);
        assertFalse(closed.openLoop());
        assertTrue(closed.maxUs() >= 50_000, "the closed loop saw the stall once: max " + closed.maxUs());
        assertEquals(100.0, closed.p99Us(), 0.2, "but its P99 does not show it");
        assertTrue(open.p99Us() > 300 * closed.p99Us());
    }

    /** With a bound of 8, the calls due while 8 wait on the stall are sent late; their wait is in their latency. */
    @Test
    void callsThatFindEveryCallerBusyAreSentLateAndCounted() throws Exception {
        SimClock clock = new SimClock(ORIGIN);
        SimEchoStack stack = new SimEchoStack(clock, 100_000, ORIGIN + 700 * MS, 50 * MS);
        CellResult r = runOpen(clock, stack, open(1000, 8, 200, 1000));
        assertEquals(8, stack.maxOutstanding, "never more than the bound in flight");
        // Due at 700..707 ms: sent, stuck in the stall. Due at 708..750 ms (43 calls): no free caller until
        // the stall's answers at 750.1 ms, so sent late.
        assertEquals(43, r.lateCalls());
        assertEquals(1000, r.calls());
        assertTrue(r.p99Us() > 39_000, "late calls are charged from their due time: P99 " + r.p99Us());
        assertFalse(r.belowTarget());
    }

    /**
     * Asked for more than the stack can do (one call in flight, 3 ms each: 333/s at most, 1000/s asked):
     * the achieved rate shows it, the row is below target, and every call due in the measured interval is
     * in the histogram, the never-sent ones with the time they had waited when the run gave up on them.
     */
    @Test
    void overloadShowsInTheAchievedRateAndOmitsNoCall() throws Exception {
        SimClock clock = new SimClock(ORIGIN);
        SimEchoStack stack = new SimEchoStack(clock, 3 * MS, Long.MAX_VALUE / 2, 0);
        CellResult r = runOpen(clock, stack, open(1000, 1, 0, 1000));
        assertEquals(1000, r.calls(), "no call omitted");
        assertTrue(r.qps() > 320 && r.qps() < 340, "achieved " + r.qps());
        assertTrue(r.belowTarget());
        assertTrue(r.lateCalls() > 990, "late " + r.lateCalls());
        assertTrue(r.p50Us() > 500_000, "the queue grows all along: P50 " + r.p50Us());
    }

    @Test
    void cellsAndPlansCarryTheRate() {
        MatrixPlan plan = new MatrixPlan(List.of(128, 4096), List.of(64), -1, 1, 4, Duration.ofMillis(500),
                Duration.ofSeconds(1), 1L << 30, Duration.ZERO, 1, List.of(1000L, 5000L));
        assertTrue(plan.openLoop());
        List<CellSpec> cells = plan.cells();
        assertEquals(List.of(1000L, 5000L, 1000L, 5000L), cells.stream().map(CellSpec::targetQps).toList());
        assertEquals(List.of(128, 128, 4096, 4096), cells.stream().map(CellSpec::requestBytes).toList());
        assertEquals(Duration.ofSeconds(6), plan.estimatedTime());
        assertFalse(plan.initialWarmupCell().openLoop(), "the JIT warm-up is a closed loop");
        assertThrows(IllegalArgumentException.class, () -> new CellSpec(8, 8, 4, 4, 2, Duration.ZERO, Duration.ofSeconds(1), 100),
                "an open loop has no pipeline");
        CellResult a = new CellResult("s", 8, 8, 4, 4, 1, 1, 100, 0, 1.0, 950, 10, 20, 30, 40, 50, null, 1000, 3);
        CellResult b = new CellResult("s", 8, 8, 4, 4, 1, 1, 100, 0, 1.0, 850, 10, 20, 30, 40, 50, null, 1000, 5);
        CellResult m = CellResult.median(List.of(a, b));
        assertEquals(1000, m.targetQps());
        assertEquals(8, m.lateCalls());
        assertFalse(a.belowTarget());
        assertTrue(b.belowTarget(), "850 of 1000 is under 90%");
    }
}
