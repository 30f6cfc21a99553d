package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.Units;
import dev.rdmarpc.bench.load.CellResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The default output: an aligned text table with coro_rpc's columns (request size, concurrency,
 * throughput, P90, P99, QPS) plus P50 and P99.9, preceded by comment lines saying how it was measured.
 * With a baseline each cell has three lines: ours, the baseline's, and the speed-up.
 */
public final class TableFormat {
    private TableFormat() {
    }

    public static void write(Report report, PrintWriter out) {
        RunInfo info = report.info();
        for (String line : header(info)) {
            out.println("# " + line);
        }
        boolean baseline = info.hasBaseline();
        boolean errors = report.hasErrors();
        List<String> head = new ArrayList<>(List.of("request", "concurrency"));
        if (baseline) {
            head.add("stack");
        }
        head.addAll(List.of("throughput(Gb/s)", "P50(us)", "P90(us)", "P99(us)", "P99.9(us)", "QPS"));
        if (errors) {
            head.add("errors");
        }
        List<List<String>> rows = new ArrayList<>();
        List<Boolean> groupStart = new ArrayList<>();
        Map<Integer, Integer> capped = new LinkedHashMap<>();
        List<Report.Speedup> speedups = report.speedups();
        int previousSize = -1;
        for (int i = 0; i < report.results().size(); i++) {
            CellResult r = report.results().get(i);
            String conc = Integer.toString(r.concurrency());
            if (r.inFlight() < r.concurrency() * info.pipeline()) {
                conc += "*";
                capped.putIfAbsent(r.requestBytes(), r.inFlight());
            }
            groupStart.add(previousSize != -1 && previousSize != r.requestBytes());
            previousSize = r.requestBytes();
            rows.add(row(Units.formatSize(r.requestBytes()), conc, baseline ? r.stack() : null, r, errors));
            if (baseline) {
                CellResult b = report.baseline().get(i);
                rows.add(row("", "", b.stack(), b, errors));
                groupStart.add(false);
                Report.Speedup s = speedups.get(i);
                List<String> sr = new ArrayList<>(List.of("", "", "speedup", Formats.factor(s.throughput()),
                        Formats.factor(s.p50()), Formats.factor(s.p90()), Formats.factor(s.p99()),
                        Formats.factor(s.p999()), Formats.factor(s.qps())));
                if (errors) {
                    sr.add("");
                }
                rows.add(sr);
                groupStart.add(false);
            }
        }
        int[] width = new int[head.size()];
        for (int c = 0; c < head.size(); c++) {
            width[c] = head.get(c).length();
            for (List<String> row : rows) {
                width[c] = Math.max(width[c], row.get(c).length());
            }
        }
        int textColumns = baseline ? 3 : 2;
        out.println(line(head, width, textColumns));
        for (int i = 0; i < rows.size(); i++) {
            if (groupStart.get(i) && baseline) {
                out.println();
            }
            out.println(line(rows.get(i), width, textColumns));
        }
        for (Map.Entry<Integer, Integer> e : capped.entrySet()) {
            out.println("* " + Units.formatSize(e.getKey()) + ": at most " + e.getValue()
                    + " calls in flight, to keep request plus response bytes in flight under "
                    + Units.formatSize(info.maxInFlightBytes()) + " (--max-in-flight)");
        }
        if (baseline) {
            out.println("speedup: ours over " + info.baseline()
                    + " per column; above 1 favours " + info.stack()
                    + " (throughput and QPS: ours/theirs; latencies: theirs/ours)");
        }
        for (CellResult r : report.results()) {
            errorNote(out, r);
        }
        for (CellResult r : report.baseline()) {
            errorNote(out, r);
        }
        out.flush();
    }

    /** The comment lines printed above the table (also used by the chart's subtitle). */
    public static List<String> header(RunInfo info) {
        List<String> lines = new ArrayList<>();
        lines.add(info.stack() + ": " + info.stackDescription());
        if (info.hasBaseline()) {
            lines.add(info.baseline() + ": " + info.baselineDescription());
        }
        lines.add("echo calls, " + info.target() + "; closed loop: each of N concurrent callers sends its next call when"
                + (info.pipeline() == 1 ? " the previous one returns" : " its previous " + info.pipeline() + " (pipeline) return"));
        lines.add(info.connections() + " connection(s), " + info.ioThreads() + " I/O thread(s) per side, response "
                + (info.echo() ? "= request size" : Units.formatSize(info.responseBytes()))
                + "; warm-up " + Units.formatDuration(info.warmup()) + " + measured "
                + Units.formatDuration(info.measure()) + " per cell"
                + (info.repeat() > 1 ? "; figures are medians of " + info.repeat() + " interleaved runs" : ""));
        lines.add("latency: HdrHistogram, microseconds, send to response; throughput = request bytes x QPS x 8");
        lines.add(info.environment());
        return lines;
    }

    private static List<String> row(String size, String conc, String stack, CellResult r, boolean errors) {
        List<String> row = new ArrayList<>();
        row.add(size);
        row.add(conc);
        if (stack != null) {
            row.add(stack);
        }
        row.add(Formats.gbps(r.gbps()));
        row.add(Formats.micros(r.p50Us()));
        row.add(Formats.micros(r.p90Us()));
        row.add(Formats.micros(r.p99Us()));
        row.add(Formats.micros(r.p999Us()));
        row.add(Formats.qps(r.qps()));
        if (errors) {
            row.add(Long.toString(r.errors()));
        }
        return row;
    }

    private static String line(List<String> cells, int[] width, int textColumns) {
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            if (c > 0) {
                sb.append("  ");
            }
            String v = cells.get(c);
            // Text columns (size, stack) left-aligned, concurrency and figures right-aligned.
            boolean left = c == 0 || (textColumns == 3 && c == 2);
            String pad = " ".repeat(width[c] - v.length());
            sb.append(left ? v + pad : pad + v);
        }
        return sb.toString().stripTrailing();
    }

    private static void errorNote(PrintWriter out, CellResult r) {
        if (r.errors() > 0) {
            out.println("! " + r.stack() + " " + Units.formatSize(r.requestBytes()) + " x" + r.concurrency() + ": "
                    + r.errors() + " failed call(s), first: " + r.firstError());
        }
    }
}
