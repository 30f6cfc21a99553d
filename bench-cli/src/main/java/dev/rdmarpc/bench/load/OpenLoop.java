package dev.rdmarpc.bench.load;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Runs one cell with open-loop load: calls are due on a fixed schedule at the target rate (total over all
 * callers, see {@link Schedule}), whatever happened to earlier calls, and each call's latency is measured
 * from the time it was <em>due</em>, not from when it was actually sent. A stall therefore counts against
 * every call it delayed, including those it kept from being sent: coordinated omission is accounted for.
 *
 * <p>Calls in flight are bounded by the cell's callers (one call outstanding per caller, preallocated by
 * the stack). When all are busy the schedule keeps running: the due call waits for the first caller to
 * come free and is sent late, and its lateness is part of its latency. Such calls are counted
 * ({@link CellResult#lateCalls}).
 *
 * <p>The calls measured are those due in the measured interval; calls due in the warm-up are sent but not
 * recorded. After the interval the schedule stops, and calls due in it that are still waiting are sent for
 * at most another interval (or one second, the longer); any still unsent then are recorded with the time
 * they had waited so far (a lower bound) and counted as late. Achieved QPS counts the responses that
 * arrived in the measured interval.
 *
 * <p>One thread, the one calling {@link #run}, paces the calls; responses arrive on the stack's threads,
 * record the latency into an HdrHistogram {@link Recorder} and hand the caller back through a lock-free
 * stack. Nothing is allocated per call.
 */
public final class OpenLoop {
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** Longest wait for a free caller before the pacer looks again (an unpark usually ends it sooner). */
    private static final long SLOT_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private OpenLoop() {
    }

    /**
     * Runs one cell at {@code spec.targetQps()} calls per second. Callers are spread round-robin over the
     * first {@code min(connections, callers)} connections and closed before returning.
     *
     * @throws IllegalStateException when calls are still outstanding a minute after the schedule ended
     */
    public static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec,
            ProgressListener progress) throws InterruptedException {
        return run(stack, connections, spec, progress, LoadClock.SYSTEM);
    }

    static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec, ProgressListener progress,
            LoadClock clock) throws InterruptedException {
        if (connections.isEmpty()) {
            throw new IllegalArgumentException("no connections");
        }
        if (!spec.openLoop()) {
            throw new IllegalArgumentException("not an open-loop cell");
        }
        int usedConnections = Math.min(connections.size(), spec.callers());
        long start = clock.nanoTime();
        long windowStart = start + spec.warmup().toNanos();
        long windowEnd = windowStart + spec.measure().toNanos();
        Shared shared = new Shared(clock, windowStart, windowEnd, spec.callers());
        List<Slot> slots = new ArrayList<>(spec.callers());
        boolean drained = false;
        try {
            for (int i = 0; i < spec.callers(); i++) {
                Slot s = new Slot(shared, connections.get(i % usedConnections).newCaller(spec.requestBytes(),
                        spec.responseBytes()));
                slots.add(s);
                shared.push(s);
            }
            Schedule schedule = new Schedule(start, spec.targetQps());
            long giveUp = windowEnd + Math.max(spec.measure().toNanos(), TimeUnit.SECONDS.toNanos(1));
            long k = 0;
            long due = schedule.intendedNanos(0);
            boolean waited = false;
            long nextTick = start;
            long now;
            while (due - windowEnd < 0 && shared.live.get() > 0 && giveUp - (now = clock.nanoTime()) > 0) {
                if (now - nextTick >= 0) {
                    tick(progress, shared, start, spec, now);
                    nextTick = now + TICK_NANOS;
                }
                if (due - now > 0) {
                    clock.parkUntil(Math.min(due, nextTick));
                    continue;
                }
                Slot s = shared.pop();
                if (s == null) {
                    if (!waited && due >= windowStart) {
                        shared.late.incrementAndGet();
                    }
                    waited = true;
                    shared.waiting = true;
                    if ((s = shared.pop()) == null) {
                        clock.parkUntil(Math.min(now + SLOT_WAIT_NANOS, nextTick));
                        shared.waiting = false;
                        continue;
                    }
                    shared.waiting = false;
                }
                waited = false;
                s.send(due);
                due = schedule.intendedNanos(++k);
            }
            now = clock.nanoTime();
            if (shared.live.get() > 0) {
                // Gave up on the backlog: what is still unsent waited at least until now.
                long end = schedule.first(windowEnd);
                for (long j = Math.max(k, schedule.first(windowStart)); j < end; j++) {
                    shared.recorder.recordValue(Math.min(now - schedule.intendedNanos(j), ClosedLoop.HIGHEST_TRACKABLE_NANOS));
                    if (j != k || !waited) {
                        shared.late.incrementAndGet();
                    }
                }
            }
            long deadline = now + ClosedLoop.DRAIN_TIMEOUT_NANOS;
            shared.waiting = true;
            while (shared.inFlight.get() > 0 && (now = clock.nanoTime()) - deadline < 0) {
                if (now - nextTick >= 0) {
                    tick(progress, shared, start, spec, now);
                    nextTick = now + TICK_NANOS;
                }
                clock.parkUntil(Math.min(deadline, nextTick));
            }
            if (shared.inFlight.get() > 0) {
                throw new IllegalStateException(shared.inFlight.get() + " of " + spec.callers()
                        + " callers still had calls outstanding " + TimeUnit.NANOSECONDS.toSeconds(ClosedLoop.DRAIN_TIMEOUT_NANOS)
                        + " s after the schedule ended");
            }
            drained = true;
            progress.onTick(ProgressListener.Phase.MEASURE, spec.measure().toNanos(), spec.measure().toNanos(),
                    shared.completed.get());
            return toResult(stack, spec, usedConnections, shared.recorder.getIntervalHistogram(), shared);
        } finally {
            if (drained || shared.inFlight.get() == 0) {
                for (Slot s : slots) {
                    s.caller.close();
                }
            }
            // Otherwise a stack still owns buffers of calls in flight: leave them to it rather than free
            // memory it may still write.
        }
    }

    private static void tick(ProgressListener progress, Shared shared, long start, CellSpec spec, long now) {
        if (now - shared.windowStart < 0) {
            progress.onTick(ProgressListener.Phase.WARMUP, now - start, spec.warmup().toNanos(), shared.completed.get());
        } else {
            long m = spec.measure().toNanos();
            progress.onTick(ProgressListener.Phase.MEASURE, Math.min(m, now - shared.windowStart), m, shared.completed.get());
        }
    }

    private static CellResult toResult(String stack, CellSpec spec, int connections, Histogram h, Shared shared) {
        long n = h.getTotalCount();
        double seconds = (shared.windowEnd - shared.windowStart) / 1e9;
        Throwable first = shared.firstError.get();
        String error = null;
        if (first != null) {
            String m = first.getMessage();
            error = m == null || m.isBlank() ? first.getClass().getSimpleName() : m;
        }
        return new CellResult(stack, spec.requestBytes(), spec.responseBytes(), spec.concurrency(), spec.inFlight(),
                connections, 1, n, shared.errors.get(), seconds, shared.completedInWindow.get() / seconds,
                micros(h, n, 50), micros(h, n, 90), micros(h, n, 99), micros(h, n, 99.9),
                n == 0 ? Double.NaN : h.getMaxValue() / 1e3, error, spec.targetQps(), shared.late.get());
    }

    private static double micros(Histogram h, long count, double percentile) {
        return count == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e3;
    }

    /** State shared by the pacer and the threads that deliver responses. */
    private static final class Shared {
        final LoadClock clock;
        final long windowStart;
        final long windowEnd;
        final Thread pacer = Thread.currentThread();
        final Recorder recorder = new Recorder(ClosedLoop.HIGHEST_TRACKABLE_NANOS, 3);
        final AtomicLong completed = new AtomicLong();
        final AtomicLong completedInWindow = new AtomicLong();
        final AtomicLong late = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<Throwable> firstError = new AtomicReference<>();
        /** Callers that have not failed. */
        final AtomicInteger live;
        final AtomicInteger inFlight = new AtomicInteger();
        /** Free callers: a Treiber stack; only the pacer pops, so there is no ABA. */
        final AtomicReference<Slot> free = new AtomicReference<>();
        /** Whether the pacer waits for a caller to come free (or for the last response) and wants an unpark. */
        volatile boolean waiting;

        Shared(LoadClock clock, long windowStart, long windowEnd, int callers) {
            this.clock = clock;
            this.windowStart = windowStart;
            this.windowEnd = windowEnd;
            this.live = new AtomicInteger(callers);
        }

        Slot pop() {
            Slot head;
            do {
                head = free.get();
                if (head == null) {
                    return null;
                }
            } while (!free.compareAndSet(head, head.next));
            head.next = null;
            return head;
        }

        void push(Slot s) {
            Slot head;
            do {
                head = free.get();
                s.next = head;
            } while (!free.compareAndSet(head, s));
        }

        /** A call ended; {@code slot} is free again, or null when its caller failed. */
        void done(Slot slot) {
            if (slot != null) {
                push(slot);
            }
            inFlight.decrementAndGet();
            if (waiting) {
                LockSupport.unpark(pacer);
            }
        }
    }

    /** One caller, preallocated by the stack, and the due time of its call in flight. */
    private static final class Slot implements CallListener {
        final Shared shared;
        final EchoCaller caller;
        Slot next;
        long intended;

        Slot(Shared shared, EchoCaller caller) {
            this.shared = shared;
            this.caller = caller;
        }

        void send(long intendedNanos) {
            intended = intendedNanos;
            shared.inFlight.incrementAndGet();
            try {
                caller.call(this);
            } catch (RuntimeException e) {
                onFailure(e);
            }
        }

        @Override
        public void onResponse() {
            Shared s = shared;
            long now = s.clock.nanoTime();
            long due = intended;
            if (due - s.windowStart >= 0 && due - s.windowEnd < 0) {
                s.recorder.recordValue(Math.min(now - due, ClosedLoop.HIGHEST_TRACKABLE_NANOS));
            }
            if (now - s.windowStart >= 0 && now - s.windowEnd < 0) {
                s.completedInWindow.incrementAndGet();
            }
            s.completed.incrementAndGet();
            s.done(this); // last: once pushed, the pacer may reuse this slot at once
        }

        @Override
        public void onFailure(Throwable cause) {
            Shared s = shared;
            s.errors.incrementAndGet();
            s.firstError.compareAndSet(null, cause);
            s.live.decrementAndGet();
            s.done(null); // a failed caller is not used again, as in the closed loop
        }
    }
}
