package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.load.CellResult;
import java.util.ArrayList;
import java.util.List;

/**
 * The results of a run: our stack's cells, optionally the baseline's cells in the same order, and the
 * speed-up of ours over the baseline per cell.
 *
 * @param info     how the run was made
 * @param results  our stack's cells
 * @param baseline the baseline's cells, same order and length as {@code results}, or empty
 */
public record Report(RunInfo info, List<CellResult> results, List<CellResult> baseline) {

    public Report {
        results = List.copyOf(results);
        baseline = List.copyOf(baseline);
        if (!baseline.isEmpty() && baseline.size() != results.size()) {
            throw new IllegalArgumentException("baseline has " + baseline.size() + " cells, results " + results.size());
        }
    }

    /**
     * Speed-up of ours over the baseline for one cell; every figure is "greater than 1 favours ours":
     * throughput and QPS ours / theirs, latencies and CPU per call ({@code cpu}: the bench's process,
     * {@code serverCpu}: the server's) theirs / ours. {@code NaN} where a side has no figure. Of
     * a stream cell: messages per second for QPS, the gaps between messages for the latencies.
     */
    public record Speedup(int requestBytes, int concurrency, double throughput, double p50, double p90,
            double p99, double p999, double qps, long targetQps, double cpu, double serverCpu) {
    }

    /** Speed-ups per cell, in cell order; empty without a baseline. */
    public List<Speedup> speedups() {
        List<Speedup> out = new ArrayList<>(baseline.size());
        for (int i = 0; i < baseline.size(); i++) {
            CellResult a = results.get(i);
            CellResult b = baseline.get(i);
            out.add(new Speedup(a.requestBytes(), a.concurrency(),
                    ratio(a.gbps(), b.gbps()), ratio(b.p50Us(), a.p50Us()), ratio(b.p90Us(), a.p90Us()),
                    ratio(b.p99Us(), a.p99Us()), ratio(b.p999Us(), a.p999Us()), ratio(a.qps(), b.qps()), a.targetQps(),
                    ratio(b.cpuUsPerCall(), a.cpuUsPerCall()), ratio(b.serverCpuUsPerCall(), a.serverCpuUsPerCall())));
        }
        return out;
    }

    private static double ratio(double num, double den) {
        return den > 0 && num > 0 && Double.isFinite(num) && Double.isFinite(den) ? num / den : Double.NaN;
    }

    /** Whether the cells were server streams ({@link RunInfo#stream()}) rather than echo calls. */
    public boolean stream() {
        return info.stream();
    }

    /** Whether the cells ran an open loop (calls due at target rates) rather than a closed one. */
    public boolean openLoop() {
        return results.stream().anyMatch(CellResult::openLoop);
    }

    /** The distinct target rates of an open-loop run, in run order; empty for a closed loop. */
    public List<Long> targetRates() {
        return results.stream().filter(CellResult::openLoop).map(CellResult::targetQps).distinct().toList();
    }

    /** Whether any cell, ours or the baseline's, had failed calls. */
    public boolean hasErrors() {
        return results.stream().anyMatch(r -> r.errors() > 0) || baseline.stream().anyMatch(r -> r.errors() > 0);
    }
}
