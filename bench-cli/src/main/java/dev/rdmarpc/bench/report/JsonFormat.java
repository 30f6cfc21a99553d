package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.load.CellResult;
import java.io.PrintWriter;
import java.util.List;

/**
 * JSON: one object with the run's settings, the cells of each stack and, with a baseline, the speed-ups.
 * {@code workload} says what the cells measured; a server-streaming run's cells carry messages per second,
 * Gb/s of payload and the gaps between consecutive messages of a stream ({@code gap_*_us}) instead of QPS
 * and call latencies. {@code cpu_us_per_call} ({@code cpu_us_per_message} for streams) is the CPU time of the
 * bench's process per call in the measured interval, {@code server_cpu_us_per_call} the server process's where
 * measured ({@link CellResult#cpuUsPerCall}); null where not measured.
 */
public final class JsonFormat {
    private JsonFormat() {
    }

    public static void write(Report report, PrintWriter out) {
        RunInfo info = report.info();
        out.println("{");
        out.println("  \"workload\": " + str(info.workload().name()) + ",");
        if (report.stream()) {
            writeStreams(report, out);
            return;
        }
        out.println("  \"load\": \"" + (report.openLoop() ? "open-loop" : "closed-loop") + "\",");
        out.println("  \"stack\": " + str(info.stack()) + ",");
        out.println("  \"stack_description\": " + str(info.stackDescription()) + ",");
        if (info.hasBaseline()) {
            out.println("  \"baseline\": " + str(info.baseline()) + ",");
            out.println("  \"baseline_description\": " + str(info.baselineDescription()) + ",");
        }
        out.println("  \"target\": " + str(info.target()) + ",");
        out.println("  \"settings\": {\"connections\": " + info.connections() + ", \"pipeline\": " + info.pipeline()
                + ", \"io_threads\": " + info.ioThreads() + ", \"warmup_seconds\": " + Formats.plain(info.warmup().toNanos() / 1e9)
                + ", \"measure_seconds\": " + Formats.plain(info.measure().toNanos() / 1e9)
                + ", \"repeat\": " + info.repeat() + ", \"max_in_flight_bytes\": " + info.maxInFlightBytes()
                + ", \"response_bytes\": " + (info.echo() ? "\"echo\"" : Integer.toString(info.responseBytes())) + "},");
        out.println("  \"environment\": " + str(info.environment()) + ",");
        out.println("  \"tls\": " + (info.hasTls() ? "{\"protocols\": " + str(info.tls()) + ", \"negotiated\": "
                + (info.tlsNegotiated() == null ? "null" : str(info.tlsNegotiated())) + "}" : "null") + ",");
        out.println("  \"latency_unit\": \"us\",");
        out.print("  \"results\": ");
        cells(out, report.results());
        if (info.hasBaseline()) {
            out.println(",");
            out.print("  \"baseline_results\": ");
            cells(out, report.baseline());
            out.println(",");
            out.println("  \"speedup\": [");
            List<Report.Speedup> speedups = report.speedups();
            for (int i = 0; i < speedups.size(); i++) {
                Report.Speedup s = speedups.get(i);
                out.print("    {\"request_bytes\": " + s.requestBytes() + ", \"concurrency\": " + s.concurrency()
                        + ", \"throughput\": " + num(s.throughput()) + ", \"p50\": " + num(s.p50())
                        + ", \"p90\": " + num(s.p90()) + ", \"p99\": " + num(s.p99()) + ", \"p999\": " + num(s.p999())
                        + ", \"qps\": " + num(s.qps()) + ", \"target_qps\": " + target(s.targetQps()) + "}");
                out.println(i + 1 < speedups.size() ? "," : "");
            }
            out.print("  ]");
        }
        out.println();
        out.println("}");
        out.flush();
    }

    /** The rest of a server-streaming run's object, after its {@code workload}. */
    private static void writeStreams(Report report, PrintWriter out) {
        RunInfo info = report.info();
        out.println("  \"stack\": " + str(info.stack()) + ",");
        out.println("  \"stack_description\": " + str(info.stackDescription()) + ",");
        if (info.hasBaseline()) {
            out.println("  \"baseline\": " + str(info.baseline()) + ",");
            out.println("  \"baseline_description\": " + str(info.baselineDescription()) + ",");
        }
        out.println("  \"target\": " + str(info.target()) + ",");
        out.println("  \"settings\": {\"connections\": " + info.connections() + ", \"io_threads\": " + info.ioThreads()
                + ", \"warmup_seconds\": " + Formats.plain(info.warmup().toNanos() / 1e9)
                + ", \"measure_seconds\": " + Formats.plain(info.measure().toNanos() / 1e9)
                + ", \"repeat\": " + info.repeat() + "},");
        out.println("  \"environment\": " + str(info.environment()) + ",");
        out.println("  \"tls\": " + (info.hasTls() ? "{\"protocols\": " + str(info.tls()) + ", \"negotiated\": "
                + (info.tlsNegotiated() == null ? "null" : str(info.tlsNegotiated())) + "}" : "null") + ",");
        out.println("  \"gap_unit\": \"us\",");
        out.print("  \"results\": ");
        streamCells(out, report.results());
        if (info.hasBaseline()) {
            out.println(",");
            out.print("  \"baseline_results\": ");
            streamCells(out, report.baseline());
            out.println(",");
            out.println("  \"speedup\": [");
            List<Report.Speedup> speedups = report.speedups();
            for (int i = 0; i < speedups.size(); i++) {
                Report.Speedup s = speedups.get(i);
                out.print("    {\"message_bytes\": " + s.requestBytes() + ", \"streams\": " + s.concurrency()
                        + ", \"msgs_per_s\": " + num(s.qps()) + ", \"throughput\": " + num(s.throughput())
                        + ", \"gap_p50\": " + num(s.p50()) + ", \"gap_p90\": " + num(s.p90())
                        + ", \"gap_p99\": " + num(s.p99()) + ", \"gap_p999\": " + num(s.p999()) + "}");
                out.println(i + 1 < speedups.size() ? "," : "");
            }
            out.print("  ]");
        }
        out.println();
        out.println("}");
        out.flush();
    }

    private static void streamCells(PrintWriter out, List<CellResult> cells) {
        out.println("[");
        for (int i = 0; i < cells.size(); i++) {
            CellResult r = cells.get(i);
            out.print("    {\"stack\": " + str(r.stack()) + ", \"message_bytes\": " + r.requestBytes()
                    + ", \"streams\": " + r.concurrency() + ", \"connections\": " + r.connections()
                    + ", \"runs\": " + r.runs() + ", \"msgs_per_s\": " + num(r.qps())
                    + ", \"throughput_gbps\": " + num(r.gbps()) + ", \"gap_p50_us\": " + num(r.p50Us())
                    + ", \"gap_p90_us\": " + num(r.p90Us()) + ", \"gap_p99_us\": " + num(r.p99Us())
                    + ", \"gap_p999_us\": " + num(r.p999Us()) + ", \"gap_max_us\": " + num(r.maxUs())
                    + ", \"messages\": " + r.calls() + ", \"payload_bytes\": " + r.calls() * r.requestBytes()
                    + ", \"errors\": " + r.errors() + ", \"seconds\": " + num(r.seconds())
                    + ", \"cpu_us_per_message\": " + num(r.cpuUsPerCall())
                    + ", \"server_cpu_us_per_message\": " + num(r.serverCpuUsPerCall())
                    + (r.firstError() != null ? ", \"first_error\": " + str(r.firstError()) : "") + "}");
            out.println(i + 1 < cells.size() ? "," : "");
        }
        out.print("  ]");
    }

    private static void cells(PrintWriter out, List<CellResult> cells) {
        out.println("[");
        for (int i = 0; i < cells.size(); i++) {
            CellResult r = cells.get(i);
            out.print("    {\"stack\": " + str(r.stack()) + ", \"request_bytes\": " + r.requestBytes()
                    + ", \"response_bytes\": " + r.responseBytes() + ", \"concurrency\": " + r.concurrency()
                    + ", \"in_flight\": " + r.inFlight() + ", \"connections\": " + r.connections()
                    + ", \"runs\": " + r.runs()
                    + ", \"throughput_gbps\": " + num(r.gbps()) + ", \"p50_us\": " + num(r.p50Us())
                    + ", \"p90_us\": " + num(r.p90Us()) + ", \"p99_us\": " + num(r.p99Us())
                    + ", \"p999_us\": " + num(r.p999Us()) + ", \"max_us\": " + num(r.maxUs())
                    + ", \"qps\": " + num(r.qps()) + ", \"calls\": " + r.calls() + ", \"errors\": " + r.errors()
                    + ", \"seconds\": " + num(r.seconds()) + ", \"target_qps\": " + target(r.targetQps())
                    + ", \"late_calls\": " + r.lateCalls() + ", \"caller_balance\": " + num(r.callerBalance())
                    + ", \"cpu_us_per_call\": " + num(r.cpuUsPerCall())
                    + ", \"server_cpu_us_per_call\": " + num(r.serverCpuUsPerCall())
                    + (r.firstError() != null ? ", \"first_error\": " + str(r.firstError()) : "") + "}");
            out.println(i + 1 < cells.size() ? "," : "");
        }
        out.print("  ]");
    }

    private static String target(long qps) {
        return qps > 0 ? Long.toString(qps) : "null";
    }

    private static String num(double v) {
        return Double.isFinite(v) ? Formats.plain(v) : "null";
    }

    /** A JSON string literal. */
    static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
