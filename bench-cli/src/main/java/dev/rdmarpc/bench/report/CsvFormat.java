package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.load.CellResult;
import java.io.PrintWriter;
import java.util.List;

/**
 * CSV: a header line, then one line per cell and stack. With a baseline, lines whose stack is
 * {@code speedup} follow each pair and carry ratios (above 1 favours ours) in the figure columns.
 * {@code target_qps} is the open loop's target rate (empty for a closed loop), {@code late_calls} its
 * calls sent late (0 for a closed loop); {@code caller_balance} the closed loop's
 * {@link CellResult#callerBalance} (empty for an open loop); {@code tls} the TLS protocol versions the
 * run allowed (empty for plain TCP); {@code cpu_us_per_call} the CPU time of the bench's process per call in the
 * measured interval and {@code server_cpu_us_per_call} the server process's ({@link CellResult#cpuUsPerCall};
 * empty where not measured).
 *
 * <p>A server-streaming run ({@link Report#stream()}) has its own header, {@link #STREAM_HEADER}: message size,
 * streams, messages per second, Gb/s of payload, the gaps between consecutive messages of a stream
 * ({@code gap_*_us}), messages and payload bytes received in the measured intervals, failed streams.
 */
public final class CsvFormat {
    static final String HEADER = "stack,request_bytes,response_bytes,concurrency,in_flight,connections,runs,"
            + "throughput_gbps,p50_us,p90_us,p99_us,p999_us,max_us,qps,calls,errors,seconds,target_qps,late_calls,caller_balance,tls,"
            + "cpu_us_per_call,server_cpu_us_per_call";

    static final String STREAM_HEADER = "stack,message_bytes,streams,connections,runs,msgs_per_s,throughput_gbps,"
            + "gap_p50_us,gap_p90_us,gap_p99_us,gap_p999_us,gap_max_us,messages,payload_bytes,errors,seconds,tls,"
            + "cpu_us_per_message,server_cpu_us_per_message";

    private CsvFormat() {
    }

    public static void write(Report report, PrintWriter out) {
        if (report.stream()) {
            writeStreams(report, out);
            return;
        }
        out.println(HEADER);
        List<Report.Speedup> speedups = report.speedups();
        String tls = report.info().hasTls() ? report.info().tls() : "";
        for (int i = 0; i < report.results().size(); i++) {
            line(out, report.results().get(i), tls);
            if (!report.baseline().isEmpty()) {
                CellResult b = report.baseline().get(i);
                line(out, b, tls);
                Report.Speedup s = speedups.get(i);
                out.println(String.join(",", "speedup", Integer.toString(s.requestBytes()), "",
                        Integer.toString(s.concurrency()), "", "", "", Formats.plain(s.throughput()),
                        Formats.plain(s.p50()), Formats.plain(s.p90()), Formats.plain(s.p99()),
                        Formats.plain(s.p999()), "", Formats.plain(s.qps()), "", "", "", target(s.targetQps()), "", "",
                        tls, "", ""));
            }
        }
        out.flush();
    }

    private static void line(PrintWriter out, CellResult r, String tls) {
        out.println(String.join(",", r.stack(), Integer.toString(r.requestBytes()), Integer.toString(r.responseBytes()),
                Integer.toString(r.concurrency()), Integer.toString(r.inFlight()), Integer.toString(r.connections()),
                Integer.toString(r.runs()),
                Formats.plain(r.gbps()), Formats.plain(r.p50Us()), Formats.plain(r.p90Us()), Formats.plain(r.p99Us()),
                Formats.plain(r.p999Us()), Formats.plain(r.maxUs()), Formats.plain(r.qps()), Long.toString(r.calls()),
                Long.toString(r.errors()), Formats.plain(r.seconds()), target(r.targetQps()), Long.toString(r.lateCalls()),
                Formats.plain(r.callerBalance()), tls, Formats.plain(r.cpuUsPerCall()),
                Formats.plain(r.serverCpuUsPerCall())));
    }

    private static void writeStreams(Report report, PrintWriter out) {
        out.println(STREAM_HEADER);
        List<Report.Speedup> speedups = report.speedups();
        String tls = report.info().hasTls() ? report.info().tls() : "";
        for (int i = 0; i < report.results().size(); i++) {
            streamLine(out, report.results().get(i), tls);
            if (!report.baseline().isEmpty()) {
                streamLine(out, report.baseline().get(i), tls);
                Report.Speedup s = speedups.get(i);
                out.println(String.join(",", "speedup", Integer.toString(s.requestBytes()),
                        Integer.toString(s.concurrency()), "", "", Formats.plain(s.qps()), Formats.plain(s.throughput()),
                        Formats.plain(s.p50()), Formats.plain(s.p90()), Formats.plain(s.p99()), Formats.plain(s.p999()),
                        "", "", "", "", "", tls, "", ""));
            }
        }
        out.flush();
    }

    private static void streamLine(PrintWriter out, CellResult r, String tls) {
        out.println(String.join(",", r.stack(), Integer.toString(r.requestBytes()), Integer.toString(r.concurrency()),
                Integer.toString(r.connections()), Integer.toString(r.runs()), Formats.plain(r.qps()),
                Formats.plain(r.gbps()), Formats.plain(r.p50Us()), Formats.plain(r.p90Us()), Formats.plain(r.p99Us()),
                Formats.plain(r.p999Us()), Formats.plain(r.maxUs()), Long.toString(r.calls()),
                Long.toString(r.calls() * r.requestBytes()), Long.toString(r.errors()), Formats.plain(r.seconds()), tls,
                Formats.plain(r.cpuUsPerCall()), Formats.plain(r.serverCpuUsPerCall())));
    }

    private static String target(long qps) {
        return qps > 0 ? Long.toString(qps) : "";
    }
}
