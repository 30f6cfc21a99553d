package dev.rdmarpc.bench.load;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The measured figures of one cell for one stack. Latencies are in microseconds and are {@code NaN}
 * when no call completed in the measured interval. With several runs ({@code --repeat}) the figures
 * are medians over the runs (see {@link #median}).
 *
 * @param stack         name of the stack, e.g. {@code rdmarpc-tcp}
 * @param requestBytes  request payload size
 * @param responseBytes response payload size
 * @param concurrency   concurrency asked for (open loop: the bound on calls in flight asked for)
 * @param inFlight      calls actually kept in flight (lower than concurrency times pipeline when capped)
 * @param connections   connections the calls were spread over
 * @param runs          measured runs the figures summarise
 * @param calls         calls completed in the measured intervals, all runs together
 * @param errors        calls that failed (warm-ups included), all runs together
 * @param seconds       length of the measured intervals, all runs together
 * @param qps           completed calls per second (median over runs); in an open loop, the responses that
 *                      arrived in the measured interval per second, i.e. the rate achieved
 * @param p50Us         median latency (median over runs)
 * @param p90Us         90th percentile latency (median over runs)
 * @param p99Us         99th percentile latency (median over runs)
 * @param p999Us        99.9th percentile latency (median over runs)
 * @param maxUs         largest latency of any run
 * @param firstError    message of the first failure, or {@code null}
 * @param targetQps     open loop: the rate asked for, calls per second; 0 for a closed loop
 * @param lateCalls     open loop: measured calls sent after their due time because every caller was busy
 *                      (or never sent, see {@link OpenLoop}), all runs together; 0 for a closed loop
 * @param callerBalance closed loop: calls answered in the measured interval to the caller answered least,
 *                      over those to the caller answered most (median over runs). 1 means every caller
 *                      was served alike; near 0, some caller (and so its connection) was starved while
 *                      others went on. {@code NaN} for an open loop, a stream cell, or a cell where no
 *                      call was answered
 * @param cpuUsPerCall  CPU time (user + system, every thread) of the bench's own process in the measured
 *                      interval, over the calls (stream cells: messages) completed in it, microseconds
 *                      (median over runs; {@link CpuMeter}). In {@code local} mode that process is client and
 *                      server both. {@code NaN} where not measured (open loop)
 * @param serverCpuUsPerCall the same for the server's process, where it runs apart on this host and its
 *                      process id was given; else {@code NaN}
 */
public record CellResult(String stack, int requestBytes, int responseBytes, int concurrency, int inFlight,
        int connections, int runs, long calls, long errors, double seconds, double qps, double p50Us, double p90Us,
        double p99Us, double p999Us, double maxUs, String firstError, long targetQps, long lateCalls,
        double callerBalance, double cpuUsPerCall, double serverCpuUsPerCall) {

    /** Below this fraction of the target rate an open-loop row is marked as not keeping up. */
    public static final double KEEPING_UP = 0.9;

    /** A result without a caller balance: a closed loop whose balance was not taken. */
    public CellResult(String stack, int requestBytes, int responseBytes, int concurrency, int inFlight,
            int connections, int runs, long calls, long errors, double seconds, double qps, double p50Us, double p90Us,
            double p99Us, double p999Us, double maxUs, String firstError) {
        this(stack, requestBytes, responseBytes, concurrency, inFlight, connections, runs, calls, errors, seconds, qps,
                p50Us, p90Us, p99Us, p999Us, maxUs, firstError, 0, 0);
    }

    /** A result without a caller balance: an open loop, or a stream cell. */
    public CellResult(String stack, int requestBytes, int responseBytes, int concurrency, int inFlight,
            int connections, int runs, long calls, long errors, double seconds, double qps, double p50Us, double p90Us,
            double p99Us, double p999Us, double maxUs, String firstError, long targetQps, long lateCalls) {
        this(stack, requestBytes, responseBytes, concurrency, inFlight, connections, runs, calls, errors, seconds, qps,
                p50Us, p90Us, p99Us, p999Us, maxUs, firstError, targetQps, lateCalls, Double.NaN);
    }

    /** A result without CPU figures. */
    public CellResult(String stack, int requestBytes, int responseBytes, int concurrency, int inFlight,
            int connections, int runs, long calls, long errors, double seconds, double qps, double p50Us, double p90Us,
            double p99Us, double p999Us, double maxUs, String firstError, long targetQps, long lateCalls,
            double callerBalance) {
        this(stack, requestBytes, responseBytes, concurrency, inFlight, connections, runs, calls, errors, seconds, qps,
                p50Us, p90Us, p99Us, p999Us, maxUs, firstError, targetQps, lateCalls, callerBalance, Double.NaN,
                Double.NaN);
    }

    /** @return this result with the CPU time per call of this process and of the server's (NaN: not measured) */
    public CellResult withCpu(double ownUsPerCall, double serverUsPerCall) {
        return new CellResult(stack, requestBytes, responseBytes, concurrency, inFlight, connections, runs, calls, errors,
                seconds, qps, p50Us, p90Us, p99Us, p999Us, maxUs, firstError, targetQps, lateCalls, callerBalance,
                ownUsPerCall, serverUsPerCall);
    }

    /** Whether this cell ran an open loop. */
    public boolean openLoop() {
        return targetQps > 0;
    }

    /** Whether an open-loop cell achieved well under its target rate (below {@link #KEEPING_UP} of it). */
    public boolean belowTarget() {
        return openLoop() && !(qps >= KEEPING_UP * targetQps);
    }

    /** Request payload throughput in Gb/s, as coro_rpc's table counts it (request bytes x QPS x 8). */
    public double gbps() {
        return qps * requestBytes * 8 / 1e9;
    }

    /**
     * Summarises runs of the same cell: QPS, each percentile, the caller balance and the CPU per call are the median over
     * the runs (the mean of the middle two for an even count), calls, errors and seconds are summed, the
     * maximum is the largest.
     */
    public static CellResult median(List<CellResult> runs) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no runs");
        }
        if (runs.size() == 1) {
            return runs.get(0);
        }
        CellResult first = runs.get(0);
        long calls = 0;
        long errors = 0;
        long late = 0;
        double seconds = 0;
        double max = Double.NaN;
        String error = null;
        for (CellResult r : runs) {
            calls += r.calls;
            errors += r.errors;
            late += r.lateCalls;
            seconds += r.seconds;
            if (!Double.isNaN(r.maxUs)) {
                max = Double.isNaN(max) ? r.maxUs : Math.max(max, r.maxUs);
            }
            if (error == null) {
                error = r.firstError;
            }
        }
        int n = 0;
        for (CellResult r : runs) {
            n += r.runs;
        }
        return new CellResult(first.stack, first.requestBytes, first.responseBytes, first.concurrency, first.inFlight,
                first.connections, n, calls, errors, seconds, median(runs, CellResult::qps), median(runs, CellResult::p50Us),
                median(runs, CellResult::p90Us), median(runs, CellResult::p99Us), median(runs, CellResult::p999Us),
                max, error, first.targetQps, late, median(runs, CellResult::callerBalance),
                median(runs, CellResult::cpuUsPerCall), median(runs, CellResult::serverCpuUsPerCall));
    }

    private static double median(List<CellResult> runs, ToDoubleFunction<CellResult> figure) {
        List<Double> values = new ArrayList<>();
        for (CellResult r : runs) {
            double v = figure.applyAsDouble(r);
            if (!Double.isNaN(v)) {
                values.add(v);
            }
        }
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        int mid = a.length / 2;
        return a.length % 2 == 1 ? a[mid] : (a[mid - 1] + a[mid]) / 2;
    }
}
