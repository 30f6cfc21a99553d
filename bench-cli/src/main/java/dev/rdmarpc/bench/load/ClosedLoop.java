package dev.rdmarpc.bench.load;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * Runs one cell with closed-loop load: a fixed number of callers, each sending its next call as soon as
 * the previous one (or, with a pipeline depth P, the previous P) has been answered.
 *
 * <p>Closed loop means a slow response delays the next request, so the latencies are those of calls that
 * were actually sent, not of a fixed arrival schedule: there is no coordinated-omission correction to
 * make, and the figures should be read as "latency at N calls in flight", not "latency at a given
 * request rate".
 *
 * <p>Latencies go into an HdrHistogram {@link Recorder} (3 significant digits, up to ten minutes) from the
 * threads that deliver responses; recording allocates nothing. The warm-up's histogram is discarded.
 * Each caller also counts the calls answered to it, so the cell reports how evenly the callers were
 * served in the measured interval ({@link CellResult#callerBalance}).
 */
public final class ClosedLoop {
    /** Largest latency the histogram tracks; longer calls are recorded as this. */
    public static final long HIGHEST_TRACKABLE_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** How long to wait, after the measurement ends, for the calls still in flight. */
    public static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private ClosedLoop() {
    }

    /**
     * Runs one cell. Callers are spread round-robin over the first {@code min(connections, callers)}
     * connections and closed before returning.
     *
     * @throws IllegalStateException when calls are still outstanding a minute after the measurement
     */
    public static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec,
            ProgressListener progress) throws InterruptedException {
        return run(stack, connections, spec, progress, LoadClock.SYSTEM, CpuMeter.SELF);
    }

    static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec, ProgressListener progress,
            CpuMeter cpu) throws InterruptedException {
        return run(stack, connections, spec, progress, LoadClock.SYSTEM, cpu);
    }

    static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec, ProgressListener progress,
            LoadClock clock) throws InterruptedException {
        return run(stack, connections, spec, progress, clock, CpuMeter.SELF);
    }

    private static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec,
            ProgressListener progress, LoadClock clock, CpuMeter cpu) throws InterruptedException {
        if (connections.isEmpty()) {
            throw new IllegalArgumentException("no connections");
        }
        int usedConnections = Math.min(connections.size(), spec.callers());
        Shared shared = new Shared(spec.callers(), clock);
        List<Group> groups = new ArrayList<>(spec.callers());
        boolean fired = false;
        boolean drained = false;
        try {
            for (int i = 0; i < spec.callers(); i++) {
                groups.add(new Group(shared, connections.get(i % usedConnections), spec));
            }
            fired = true;
            shared.running = true;
            for (Group g : groups) {
                g.fire();
            }
            waitPhase(ProgressListener.Phase.WARMUP, spec.warmup().toNanos(), shared, progress);
            shared.recorder.getIntervalHistogram(); // discard the warm-up
            long[] answeredBefore = answered(groups);
            CpuMeter.Reading cpu0 = cpu.read();
            long t0 = clock.nanoTime();
            waitPhase(ProgressListener.Phase.MEASURE, spec.measure().toNanos(), shared, progress);
            Histogram h = shared.recorder.getIntervalHistogram();
            long t1 = clock.nanoTime();
            CpuMeter.Reading cpu1 = cpu.read();
            double balance = balance(answeredBefore, answered(groups));
            shared.running = false;
            long deadline = t1 + DRAIN_TIMEOUT_NANOS;
            while (shared.outstandingGroups.get() > 0 && clock.nanoTime() - deadline < 0) {
                clock.parkUntil(deadline); // the last group to retire unparks this thread
            }
            if (shared.outstandingGroups.get() > 0) {
                throw new IllegalStateException(shared.outstandingGroups.get() + " of " + spec.callers()
                        + " callers still had calls outstanding " + TimeUnit.NANOSECONDS.toSeconds(DRAIN_TIMEOUT_NANOS)
                        + " s after the measurement ended");
            }
            drained = true;
            double[] perCall = CpuMeter.perCallUs(cpu0, cpu1, h.getTotalCount());
            return toResult(stack, spec, usedConnections, h, (t1 - t0) / 1e9, shared, balance)
                    .withCpu(perCall[0], perCall[1]);
        } finally {
            shared.running = false;
            if (!fired || drained || shared.outstandingGroups.get() == 0) {
                for (Group g : groups) {
                    g.close();
                }
            }
            // Otherwise a stack still owns buffers of calls in flight: leave them to it rather than free
            // memory it may still write.
        }
    }

    private static void waitPhase(ProgressListener.Phase phase, long nanos, Shared shared, ProgressListener progress) {
        LoadClock clock = shared.clock;
        long start = clock.nanoTime();
        long now;
        while ((now = clock.nanoTime()) - start < nanos && shared.outstandingGroups.get() > 0) {
            progress.onTick(phase, now - start, nanos, shared.completed.get());
            clock.parkUntil(now + Math.min(TICK_NANOS, nanos - (now - start)));
        }
        progress.onTick(phase, Math.min(nanos, clock.nanoTime() - start), nanos, shared.completed.get());
    }

    /** @return the calls answered so far to each caller */
    private static long[] answered(List<Group> groups) {
        long[] a = new long[groups.size()];
        for (int i = 0; i < a.length; i++) {
            for (Slot s : groups.get(i).slots) {
                a[i] += s.answered();
            }
        }
        return a;
    }

    /** @return calls answered to the caller answered least over those to the one answered most, NaN for none */
    static double balance(long[] before, long[] after) {
        long least = Long.MAX_VALUE;
        long most = 0;
        for (int i = 0; i < before.length; i++) {
            long n = after[i] - before[i];
            least = Math.min(least, n);
            most = Math.max(most, n);
        }
        return most == 0 ? Double.NaN : (double) least / most;
    }

    private static CellResult toResult(String stack, CellSpec spec, int connections, Histogram h, double seconds,
            Shared shared, double balance) {
        long n = h.getTotalCount();
        Throwable first = shared.firstError.get();
        return new CellResult(stack, spec.requestBytes(), spec.responseBytes(), spec.concurrency(), spec.inFlight(),
                connections, 1, n, shared.errors.get(), seconds, seconds > 0 ? n / seconds : 0,
                micros(h, n, 50), micros(h, n, 90), micros(h, n, 99), micros(h, n, 99.9),
                n == 0 ? Double.NaN : h.getMaxValue() / 1e3,
                first == null ? null : describe(first), 0, 0, balance);
    }

    private static double micros(Histogram h, long count, double percentile) {
        return count == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e3;
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }

    /** State shared by all callers of a cell. */
    private static final class Shared {
        final Recorder recorder = new Recorder(HIGHEST_TRACKABLE_NANOS, 3);
        final AtomicLong completed = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<Throwable> firstError = new AtomicReference<>();
        final AtomicInteger outstandingGroups;
        final LoadClock clock;
        final Thread driver = Thread.currentThread();
        volatile boolean running;

        Shared(int groups, LoadClock clock) {
            outstandingGroups = new AtomicInteger(groups);
            this.clock = clock;
        }

        void record(long nanos) {
            recorder.recordValue(Math.min(nanos, HIGHEST_TRACKABLE_NANOS));
            completed.incrementAndGet();
        }

        void fail(Throwable cause) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, cause);
        }

        void retire() {
            if (outstandingGroups.decrementAndGet() == 0) {
                LockSupport.unpark(driver);
            }
        }
    }

    /** One closed-loop caller: P calls sent back to back, the next P once all have been answered. */
    private static final class Group {
        final Shared shared;
        final Slot[] slots;
        final AtomicInteger remaining = new AtomicInteger();
        volatile boolean failed;

        Group(Shared shared, EchoConnection connection, CellSpec spec) {
            this.shared = shared;
            this.slots = new Slot[spec.pipeline()];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = new Slot(this, connection.newCaller(spec.requestBytes(), spec.responseBytes()));
            }
        }

        void fire() {
            remaining.set(slots.length);
            for (Slot s : slots) {
                s.start();
            }
        }

        void slotDone() {
            if (remaining.decrementAndGet() == 0) {
                if (shared.running && !failed) {
                    fire();
                } else {
                    shared.retire();
                }
            }
        }

        void close() {
            for (Slot s : slots) {
                s.caller.close();
            }
        }
    }

    /**
     * One call slot: its caller, preallocated by the stack, the send time of its call in flight, and the
     * calls answered to it (written by whichever thread delivers its response, one call at a time; read by
     * the driver).
     */
    private static final class Slot implements CallListener {
        private static final VarHandle ANSWERED;

        static {
            try {
                ANSWERED = MethodHandles.lookup().findVarHandle(Slot.class, "answered", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final Group group;
        final EchoCaller caller;
        long startNanos;
        private long answered;

        Slot(Group group, EchoCaller caller) {
            this.group = group;
            this.caller = caller;
        }

        void start() {
            startNanos = group.shared.clock.nanoTime();
            try {
                caller.call(this);
            } catch (RuntimeException e) {
                onFailure(e);
            }
        }

        @Override
        public void onResponse() {
            group.shared.record(group.shared.clock.nanoTime() - startNanos);
            ANSWERED.setRelease(this, answered + 1); // one writer at a time: no atomic increment needed
            group.slotDone();
        }

        long answered() {
            return (long) ANSWERED.getAcquire(this);
        }

        @Override
        public void onFailure(Throwable cause) {
            group.shared.fail(cause);
            group.failed = true;
            group.slotDone();
        }
    }
}
