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
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Runs one server-streaming cell ({@link Workload#stream}): S streams opened at the start of the cell, each
 * with one small request, after which the server sends messages of the cell's size as fast as the stack's
 * flow control lets it; at the end of the measured interval the bench cancels every stream and waits for
 * each to end.
 *
 * <p>Why a cancel rather than a message count: the cell then lasts its warm-up and measured time whatever
 * the stack's speed, exactly as an echo cell does, every stream runs at full rate for the whole measured
 * interval (no tail in which some streams have finished and others not), and the measured figures are
 * counter differences taken at the interval's two ends, so the warm-up's messages (and the stream's
 * start-up) are excluded the same way the echo cells exclude theirs.
 *
 * <p>Per stream the listener counts messages and records the time between consecutive messages in an
 * HdrHistogram {@link SingleWriterRecorder} of its own (2 significant digits; no lock shared between
 * streams, nothing allocated per message). A message whose length is not the cell's size, a stream that
 * fails or that the server ends before the cell is over, counts as an error (once per stream, which then
 * counts no more messages).
 *
 * <p>The result's {@code calls} are messages, {@code qps} messages per second, its percentiles the gaps
 * between messages of a stream in microseconds, and {@link CellResult#gbps()} the payload received: message
 * size x messages per second x 8.
 */
public final class StreamLoop {
    /** Largest gap the histograms track; longer gaps are recorded as this. */
    public static final long HIGHEST_TRACKABLE_NANOS = ClosedLoop.HIGHEST_TRACKABLE_NANOS;
    /** Significant digits of the gap histograms (1 %: 34 KiB a histogram, two per stream). */
    static final int GAP_DIGITS = 2;
    /** Most streams one cell may open (each holds two gap histograms). */
    public static final int MAX_STREAMS = 1024;
    /** How long to wait, after cancelling, for every stream to end. */
    public static final long END_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private StreamLoop() {
    }

    /**
     * Runs one stream cell. Streams are spread round-robin over the first {@code min(connections, streams)}
     * connections, and have all ended when this returns.
     *
     * @throws IllegalStateException when a stack has no streaming workload, or when streams have not ended a
     *                               minute after they were cancelled
     */
    public static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec,
            ProgressListener progress) throws InterruptedException {
        return run(stack, connections, spec, progress, CpuMeter.SELF);
    }

    static CellResult run(String stack, List<EchoConnection> connections, CellSpec spec,
            ProgressListener progress, CpuMeter cpu) throws InterruptedException {
        if (connections.isEmpty()) {
            throw new IllegalArgumentException("no connections");
        }
        if (!spec.stream()) {
            throw new IllegalArgumentException("not a stream cell: " + spec);
        }
        if (spec.concurrency() > MAX_STREAMS) {
            throw new IllegalArgumentException(spec.concurrency() + " streams is above " + MAX_STREAMS);
        }
        int streams = spec.concurrency();
        int usedConnections = Math.min(connections.size(), streams);
        Shared shared = new Shared(streams);
        List<Reader> readers = new ArrayList<>(streams);
        List<StreamCall> calls = new ArrayList<>(streams);
        try {
            for (int i = 0; i < streams; i++) {
                Reader r = new Reader(shared, spec.requestBytes());
                readers.add(r);
                StreamCall call;
                try {
                    call = connections.get(i % usedConnections).openStream(spec.requestBytes(), r);
                } catch (UnsupportedOperationException e) {
                    shared.open.addAndGet(-(streams - i)); // never opened: nothing to wait for
                    throw new IllegalStateException(stack + " has no streaming workload", e);
                } catch (RuntimeException e) {
                    r.onEnd(e);
                    continue;
                }
                calls.add(call);
            }
            long warmupNanos = spec.warmup().toNanos();
            waitPhase(ProgressListener.Phase.WARMUP, warmupNanos, shared, readers, progress);
            CpuMeter.Reading cpu0 = cpu.read();
            long t0 = System.nanoTime();
            long[] start = new long[streams];
            for (int i = 0; i < streams; i++) {
                start[i] = readers.get(i).messages();
                readers.get(i).gaps.getIntervalHistogram(); // discard the warm-up
            }
            waitPhase(ProgressListener.Phase.MEASURE, spec.measure().toNanos(), shared, readers, progress);
            long t1 = System.nanoTime();
            CpuMeter.Reading cpu1 = cpu.read();
            long messages = 0;
            Histogram gaps = new Histogram(HIGHEST_TRACKABLE_NANOS, GAP_DIGITS);
            for (int i = 0; i < streams; i++) {
                messages += readers.get(i).messages() - start[i];
                gaps.add(readers.get(i).gaps.getIntervalHistogram());
            }
            stop(shared, calls);
            double[] perCall = CpuMeter.perCallUs(cpu0, cpu1, messages);
            return toResult(stack, spec, usedConnections, messages, gaps, (t1 - t0) / 1e9, shared)
                    .withCpu(perCall[0], perCall[1]);
        } finally {
            stop(shared, calls);
        }
    }

    /** Cancels every stream, once, and waits for each to end. */
    private static void stop(Shared shared, List<StreamCall> calls) {
        if (shared.stopping) {
            return;
        }
        shared.stopping = true;
        for (StreamCall c : calls) {
            try {
                c.cancel();
            } catch (RuntimeException e) {
                // The stream ended already, or its connection went away: it ends (or ended) either way.
            }
        }
        long deadline = System.nanoTime() + END_TIMEOUT_NANOS;
        while (shared.open.get() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(deadline - System.nanoTime()); // the last stream to end unparks this thread
        }
        if (shared.open.get() > 0) {
            throw new IllegalStateException(shared.open.get() + " of " + shared.streams + " streams had not ended "
                    + TimeUnit.NANOSECONDS.toSeconds(END_TIMEOUT_NANOS) + " s after they were cancelled");
        }
    }

    private static void waitPhase(ProgressListener.Phase phase, long nanos, Shared shared, List<Reader> readers,
            ProgressListener progress) {
        long start = System.nanoTime();
        long now;
        while ((now = System.nanoTime()) - start < nanos && shared.open.get() > 0) {
            progress.onTick(phase, now - start, nanos, total(readers));
            LockSupport.parkNanos(Math.min(TICK_NANOS, nanos - (now - start)));
        }
        progress.onTick(phase, Math.min(nanos, System.nanoTime() - start), nanos, total(readers));
    }

    private static long total(List<Reader> readers) {
        long n = 0;
        for (Reader r : readers) {
            n += r.messages();
        }
        return n;
    }

    private static CellResult toResult(String stack, CellSpec spec, int connections, long messages, Histogram gaps,
            double seconds, Shared shared) {
        long n = gaps.getTotalCount();
        Throwable first = shared.firstError.get();
        return new CellResult(stack, spec.requestBytes(), spec.responseBytes(), spec.concurrency(), spec.concurrency(),
                connections, 1, messages, shared.errors.get(), seconds, seconds > 0 ? messages / seconds : 0,
                micros(gaps, n, 50), micros(gaps, n, 90), micros(gaps, n, 99), micros(gaps, n, 99.9),
                n == 0 ? Double.NaN : gaps.getMaxValue() / 1e3, first == null ? null : describe(first));
    }

    private static double micros(Histogram h, long count, double percentile) {
        return count == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e3;
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }

    /** State shared by the streams of a cell. */
    private static final class Shared {
        final int streams;
        final AtomicInteger open;
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<Throwable> firstError = new AtomicReference<>();
        final Thread driver = Thread.currentThread();
        /** Set before the streams are cancelled: an end from then on is the bench's own doing. */
        volatile boolean stopping;

        Shared(int streams) {
            this.streams = streams;
            this.open = new AtomicInteger(streams);
        }

        void fail(Throwable cause) {
            errors.incrementAndGet();
            firstError.compareAndSet(null, cause);
        }

        void ended() {
            if (open.decrementAndGet() == 0) {
                LockSupport.unpark(driver);
            }
        }
    }

    /** One stream's listener: its message count, the time of its last message, its gap histogram. */
    private static final class Reader implements StreamListener {
        private static final VarHandle MESSAGES;

        static {
            try {
                MESSAGES = MethodHandles.lookup().findVarHandle(Reader.class, "messages", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final Shared shared;
        final int expected;
        final SingleWriterRecorder gaps = new SingleWriterRecorder(HIGHEST_TRACKABLE_NANOS, GAP_DIGITS);
        /** Written by the stream's one delivering thread (release), read by the driver (acquire). */
        private long messages;
        private long lastNanos;
        private boolean failed;
        private boolean ended;

        Reader(Shared shared, int expected) {
            this.shared = shared;
            this.expected = expected;
        }

        long messages() {
            return (long) MESSAGES.getAcquire(this);
        }

        @Override
        public void onMessage(int payloadBytes) {
            if (failed) {
                return;
            }
            if (payloadBytes != expected) {
                failed = true;
                shared.fail(new IllegalStateException("a stream message of " + payloadBytes + " bytes, expected "
                        + expected));
                return;
            }
            long now = System.nanoTime();
            if (lastNanos != 0) {
                gaps.recordValue(Math.min(now - lastNanos, HIGHEST_TRACKABLE_NANOS));
            }
            lastNanos = now;
            MESSAGES.setRelease(this, messages + 1);
        }

        @Override
        public void onEnd(Throwable failure) {
            if (ended) {
                return;
            }
            ended = true;
            if (!shared.stopping && !failed) {
                failed = true;
                shared.fail(failure != null ? failure
                        : new IllegalStateException("the server ended a stream before the cell was over"));
            }
            shared.ended();
        }
    }
}
