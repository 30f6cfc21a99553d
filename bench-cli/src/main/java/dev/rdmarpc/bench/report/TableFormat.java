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
 * With a baseline each cell has three lines: ours, the baseline's, and the speed-up. An open-loop run has
 * the target rate and the bound on calls in flight where the concurrency was, the achieved QPS marked
 * {@code <} where it fell well short of the target, and a column of late calls; a closed-loop run has a
 * column of how evenly the callers were answered ({@link CellResult#callerBalance}). A server-streaming run
 * ({@link Report#stream()}) has its own columns: message size, streams, messages per second, Gb/s of
 * payload, and percentiles of the time between consecutive messages of a stream.
 */
public final class TableFormat {
    private TableFormat() {
    }

    public static void write(Report report, PrintWriter out) {
        RunInfo info = report.info();
        for (String line : header(report)) {
            out.println("# " + line);
        }
        if (report.stream()) {
            writeStreams(report, out);
            return;
        }
        boolean baseline = info.hasBaseline();
        boolean errors = report.hasErrors();
        boolean open = report.openLoop();
        List<String> head = new ArrayList<>(List.of("request"));
        head.addAll(open ? List.of("target(req/s)", "max-in-flight") : List.of("concurrency"));
        if (baseline) {
            head.add("stack");
        }
        head.addAll(List.of("throughput(Gb/s)", "P50(us)", "P90(us)", "P99(us)", "P99.9(us)", "QPS"));
        head.add(open ? "late" : "balance");
        boolean cpu = measured(report, false);
        boolean serverCpu = measured(report, true);
        if (cpu) {
            head.add("cpu/call(us)");
        }
        if (serverCpu) {
            head.add("srv-cpu/call(us)");
        }
        if (errors) {
            head.add("errors");
        }
        boolean shortOfTarget = false;
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
            List<String> lead = new ArrayList<>(List.of(Units.formatSize(r.requestBytes())));
            if (open) {
                lead.add(Long.toString(r.targetQps()));
            }
            lead.add(conc);
            rows.add(row(lead, baseline ? r.stack() : null, r, errors, open, cpu, serverCpu));
            shortOfTarget |= r.belowTarget();
            List<String> blank = new ArrayList<>(java.util.Collections.nCopies(lead.size(), ""));
            if (baseline) {
                CellResult b = report.baseline().get(i);
                rows.add(row(blank, b.stack(), b, errors, open, cpu, serverCpu));
                shortOfTarget |= b.belowTarget();
                groupStart.add(false);
                Report.Speedup s = speedups.get(i);
                List<String> sr = new ArrayList<>(blank);
                sr.addAll(List.of("speedup", Formats.factor(s.throughput()),
                        Formats.factor(s.p50()), Formats.factor(s.p90()), Formats.factor(s.p99()),
                        Formats.factor(s.p999()), Formats.factor(s.qps())));
                sr.add(""); // late calls, or the balance: no ratio
                if (cpu) {
                    sr.add(Formats.factor(s.cpu()));
                }
                if (serverCpu) {
                    sr.add(Formats.factor(s.serverCpu()));
                }
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
        int stackColumn = baseline ? (open ? 3 : 2) : -1;
        out.println(line(head, width, stackColumn));
        for (int i = 0; i < rows.size(); i++) {
            if (groupStart.get(i) && baseline) {
                out.println();
            }
            out.println(line(rows.get(i), width, stackColumn));
        }
        for (Map.Entry<Integer, Integer> e : capped.entrySet()) {
            out.println("* " + Units.formatSize(e.getKey()) + ": at most " + e.getValue()
                    + " calls in flight, to keep request plus response bytes in flight under "
                    + Units.formatSize(info.maxInFlightBytes()) + " (--max-in-flight)");
        }
        if (shortOfTarget) {
            out.println("< achieved under " + Math.round(CellResult.KEEPING_UP * 100) + "% of the target rate: the stack "
                    + "(or the bound on calls in flight) could not keep up; latencies include the queueing");
        }
        if (open) {
            out.println("late: measured calls sent after their due time because max-in-flight calls were outstanding "
                    + "(or still unsent when the run gave up on them); their wait counts in their latency");
        } else {
            out.println("balance: calls answered to the caller answered least / to the one answered most, in the "
                    + "measured time (1.00: every caller served alike; near 0: a caller starved)");
        }
        cpuNote(out, cpu, serverCpu, "call");
        if (baseline) {
            out.println("speedup: ours over " + info.baseline()
                    + " per column; above 1 favours " + info.stack()
                    + " (throughput and QPS: ours/theirs; latencies" + (cpu ? " and CPU per call" : "") + ": theirs/ours)");
        }
        for (CellResult r : report.results()) {
            errorNote(out, r, false);
        }
        for (CellResult r : report.baseline()) {
            errorNote(out, r, false);
        }
        out.flush();
    }

    /** The table of a server-streaming run, after its comment lines. */
    private static void writeStreams(Report report, PrintWriter out) {
        RunInfo info = report.info();
        boolean baseline = info.hasBaseline();
        boolean errors = report.hasErrors();
        List<String> head = new ArrayList<>(List.of("message", "streams"));
        if (baseline) {
            head.add("stack");
        }
        head.addAll(List.of("msgs/s", "throughput(Gb/s)", "gap-P50(us)", "gap-P90(us)", "gap-P99(us)", "gap-P99.9(us)"));
        boolean cpu = measured(report, false);
        boolean serverCpu = measured(report, true);
        if (cpu) {
            head.add("cpu/msg(us)");
        }
        if (serverCpu) {
            head.add("srv-cpu/msg(us)");
        }
        if (errors) {
            head.add("errors");
        }
        List<List<String>> rows = new ArrayList<>();
        List<Boolean> groupStart = new ArrayList<>();
        List<Report.Speedup> speedups = report.speedups();
        int previousSize = -1;
        for (int i = 0; i < report.results().size(); i++) {
            CellResult r = report.results().get(i);
            List<String> lead = List.of(Units.formatSize(r.requestBytes()), Integer.toString(r.concurrency()));
            groupStart.add(previousSize != -1 && previousSize != r.requestBytes());
            previousSize = r.requestBytes();
            rows.add(streamRow(lead, baseline ? r.stack() : null, r, errors, cpu, serverCpu));
            if (baseline) {
                List<String> blank = List.of("", "");
                rows.add(streamRow(blank, report.baseline().get(i).stack(), report.baseline().get(i), errors, cpu, serverCpu));
                groupStart.add(false);
                Report.Speedup s = speedups.get(i);
                List<String> sr = new ArrayList<>(blank);
                sr.addAll(List.of("speedup", Formats.factor(s.qps()), Formats.factor(s.throughput()),
                        Formats.factor(s.p50()), Formats.factor(s.p90()), Formats.factor(s.p99()), Formats.factor(s.p999())));
                if (cpu) {
                    sr.add(Formats.factor(s.cpu()));
                }
                if (serverCpu) {
                    sr.add(Formats.factor(s.serverCpu()));
                }
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
        int stackColumn = baseline ? 2 : -1;
        out.println(line(head, width, stackColumn));
        for (int i = 0; i < rows.size(); i++) {
            if (groupStart.get(i) && baseline) {
                out.println();
            }
            out.println(line(rows.get(i), width, stackColumn));
        }
        cpuNote(out, cpu, serverCpu, "message");
        if (baseline) {
            out.println("speedup: ours over " + info.baseline() + " per column; above 1 favours " + info.stack()
                    + " (msgs/s and throughput: ours/theirs; gaps" + (cpu ? " and CPU per message" : "") + ": theirs/ours)");
        }
        for (CellResult r : report.results()) {
            errorNote(out, r, true);
        }
        for (CellResult r : report.baseline()) {
            errorNote(out, r, true);
        }
        out.flush();
    }

    /** Whether any cell has a CPU figure: the bench process's, or ({@code server}) the server's. */
    private static boolean measured(Report report, boolean server) {
        for (List<CellResult> list : List.of(report.results(), report.baseline())) {
            for (CellResult r : list) {
                if (Double.isFinite(server ? r.serverCpuUsPerCall() : r.cpuUsPerCall())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static void cpuNote(PrintWriter out, boolean cpu, boolean serverCpu, String unit) {
        if (cpu) {
            out.println("cpu/" + (unit.equals("call") ? "call" : "msg") + ": CPU time (user + system, every thread: "
                    + "I/O, callers, JIT, GC, an idle stack beside) of the bench's process in the measured interval per "
                    + unit + "; where client and server share the JVM (local), the cost of both sides");
        }
        if (serverCpu) {
            out.println("srv-cpu/" + (unit.equals("call") ? "call" : "msg") + ": the same for the server's process "
                    + "(--server-pid), which hosts both stacks' servers");
        }
    }

    private static void addCpu(List<String> row, CellResult r, boolean cpu, boolean serverCpu) {
        if (cpu) {
            row.add(Formats.cpu(r.cpuUsPerCall()));
        }
        if (serverCpu) {
            row.add(Formats.cpu(r.serverCpuUsPerCall()));
        }
    }

    private static List<String> streamRow(List<String> lead, String stack, CellResult r, boolean errors, boolean cpu,
            boolean serverCpu) {
        List<String> row = new ArrayList<>(lead);
        if (stack != null) {
            row.add(stack);
        }
        row.add(Formats.qps(r.qps()));
        row.add(Formats.gbps(r.gbps()));
        row.add(Formats.micros(r.p50Us()));
        row.add(Formats.micros(r.p90Us()));
        row.add(Formats.micros(r.p99Us()));
        row.add(Formats.micros(r.p999Us()));
        addCpu(row, r, cpu, serverCpu);
        if (errors) {
            row.add(Long.toString(r.errors()));
        }
        return row;
    }

    /** The comment lines printed above the table. */
    public static List<String> header(Report report) {
        RunInfo info = report.info();
        List<String> lines = new ArrayList<>();
        lines.add(info.stack() + ": " + info.stackDescription());
        if (info.hasBaseline()) {
            lines.add(info.baseline() + ": " + info.baselineDescription());
        }
        if (report.stream()) {
            lines.add("server streaming, " + info.target() + "; per stream one small request, then the server sends "
                    + "messages of the given size as fast as the stream's flow control allows, until the bench cancels "
                    + "the stream at the end of the cell");
            lines.add(info.connections() + " connection(s), " + info.ioThreads() + " I/O thread(s) per side, the streams "
                    + "spread over them; warm-up " + Units.formatDuration(info.warmup()) + " + measured "
                    + Units.formatDuration(info.measure()) + " per cell"
                    + (info.repeat() > 1 ? "; figures are medians of " + info.repeat() + " interleaved runs" : ""));
            lines.add("msgs/s: messages received in the measured interval per second, all streams together; throughput "
                    + "= payload bytes received x 8 (message size x msgs/s x 8); gap: time between consecutive messages "
                    + "of a stream at the client, HdrHistogram, microseconds");
            if (info.hasTls()) {
                lines.add(tlsLine(info));
            }
            lines.add(info.environment());
            return lines;
        }
        if (report.openLoop()) {
            StringBuilder rates = new StringBuilder();
            for (long r : report.targetRates()) {
                rates.append(rates.isEmpty() ? "" : ", ").append(r);
            }
            lines.add("echo calls, " + info.target() + "; open loop at " + rates + " req/s: calls due on a fixed schedule "
                    + "(total over all callers), at most max-in-flight outstanding, QPS = rate achieved");
        } else {
            lines.add("echo calls, " + info.target() + "; closed loop: each of N concurrent callers sends its next call when"
                    + (info.pipeline() == 1 ? " the previous one returns" : " its previous " + info.pipeline() + " (pipeline) return"));
        }
        lines.add(info.connections() + " connection(s), " + info.ioThreads() + " I/O thread(s) per side, response "
                + (info.echo() ? "= request size" : Units.formatSize(info.responseBytes()))
                + "; warm-up " + Units.formatDuration(info.warmup()) + " + measured "
                + Units.formatDuration(info.measure()) + " per cell"
                + (info.repeat() > 1 ? "; figures are medians of " + info.repeat() + " interleaved runs" : ""));
        lines.add("latency: HdrHistogram, microseconds, " + (report.openLoop()
                ? "from each call's due time to its response (coordinated omission accounted for)" : "send to response")
                + "; throughput = request bytes x QPS x 8");
        if (info.hasTls()) {
            lines.add(tlsLine(info));
        }
        lines.add(info.environment());
        return lines;
    }

    private static String tlsLine(RunInfo info) {
        return "TLS: " + info.tls() + " only, the JDK's TLS on every stack; negotiated: "
                + (info.tlsNegotiated() == null ? "not seen (the servers ran in another process)" : info.tlsNegotiated());
    }

    private static List<String> row(List<String> lead, String stack, CellResult r, boolean errors, boolean open,
            boolean cpu, boolean serverCpu) {
        List<String> row = new ArrayList<>(lead);
        if (stack != null) {
            row.add(stack);
        }
        row.add(Formats.gbps(r.gbps()));
        row.add(Formats.micros(r.p50Us()));
        row.add(Formats.micros(r.p90Us()));
        row.add(Formats.micros(r.p99Us()));
        row.add(Formats.micros(r.p999Us()));
        row.add(Formats.qps(r.qps()) + (r.belowTarget() ? "<" : ""));
        row.add(open ? Long.toString(r.lateCalls()) : Formats.ratio(r.callerBalance()));
        addCpu(row, r, cpu, serverCpu);
        if (errors) {
            row.add(Long.toString(r.errors()));
        }
        return row;
    }

    private static String line(List<String> cells, int[] width, int stackColumn) {
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            if (c > 0) {
                sb.append("  ");
            }
            String v = cells.get(c);
            // Text columns (size, stack) left-aligned, concurrency and figures right-aligned.
            boolean left = c == 0 || c == stackColumn;
            String pad = " ".repeat(width[c] - v.length());
            sb.append(left ? v + pad : pad + v);
        }
        return sb.toString().stripTrailing();
    }

    private static void errorNote(PrintWriter out, CellResult r, boolean stream) {
        if (r.errors() > 0) {
            out.println("! " + r.stack() + " " + Units.formatSize(r.requestBytes())
                    + (r.openLoop() ? " at " + r.targetQps() + "/s" : "") + " x" + r.concurrency()
                    + (stream ? " streams: " + r.errors() + " failed stream(s)" : ": " + r.errors() + " failed call(s)")
                    + ", first: " + r.firstError());
        }
    }
}
