package dev.rdmarpc.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

class FormatsTest {

    private static String render(BiConsumer<Report, PrintWriter> format, Report report) {
        StringWriter s = new StringWriter();
        format.accept(report, new PrintWriter(s));
        return s.toString();
    }

    @Test
    void tableHasCoroRpcColumnsAlignedWithCapNote() {
        Report report = new Report(ReportFixtures.info(false), ReportFixtures.ours(), List.of());
        String out = render(TableFormat::write, report);
        List<String> rows = out.lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals(List.of(
                "request  concurrency  throughput(Gb/s)  P50(us)  P90(us)  P99(us)  P99.9(us)    QPS  balance",
                "128B               1             0.010     95.5      120      180        410  10000     1.00",
                "128B              16             0.051      150      230     4200       4800  50000     0.98",
                "8M                 1             13.42     4900     5100     6000       6500    200     1.00",
                "8M              256*             33.55    31000    35000    41000      42000    500     0.50",
                "* 8M: at most 16 calls in flight, to keep request plus response bytes in flight under 256M (--max-in-flight)",
                "balance: calls answered to the caller answered least / to the one answered most, in the measured time"
                        + " (1.00: every caller served alike; near 0: a caller starved)"),
                rows);
        assertTrue(out.startsWith("# rdmarpc-tcp: test stack\n"), out);
        assertTrue(out.contains("# echo calls, tcp loopback 127.0.0.1; closed loop"), out);
        assertTrue(out.contains("warm-up 1s + measured 2s per cell"), out);
        assertTrue(out.contains("latency: HdrHistogram, microseconds"), out);
    }

    @Test
    void tableWithBaselinePrintsOursTheirsAndSpeedup() {
        Report report = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        String out = render(TableFormat::write, report);
        List<String> rows = out.lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals("request  concurrency  stack        throughput(Gb/s)  P50(us)  P90(us)  P99(us)  P99.9(us)    QPS"
                + "  balance  errors", rows.get(0));
        assertEquals("128B               1  rdmarpc-tcp             0.010     95.5      120      180        410  10000"
                + "     1.00       0", rows.get(1));
        assertEquals("                      grpc-java               0.005      191      241      360        820   5000"
                + "     1.00       0", rows.get(2));
        assertEquals("                      speedup                 2.00x    2.00x    2.00x    2.00x      2.00x  2.00x",
                rows.get(3));
        assertTrue(rows.contains("                      grpc-java               16.78    62000    70000    82000      84000    250"
                + "     0.25       3"), String.join("\n", rows));
        assertTrue(rows.contains(""), "a blank line between request sizes");
        assertTrue(out.contains("speedup: ours over grpc-java per column; above 1 favours rdmarpc-tcp"), out);
        assertTrue(out.contains("! grpc-java 8M x256: 3 failed call(s), first: DEADLINE_EXCEEDED"), out);
        assertTrue(report.hasErrors());
    }

    @Test
    void speedupsFavourOursAboveOne() {
        Report report = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        Report.Speedup s = report.speedups().get(1);
        assertEquals(4.0, s.qps(), 1e-9);
        assertEquals(4.0, s.throughput(), 1e-9);
        assertEquals(6.0, s.p50(), 1e-9);
        assertEquals(5600.0 / 4200, s.p99(), 1e-9);
    }

    @Test
    void cpuPerCallIsAColumnOfEveryFormatWhereMeasured() {
        List<dev.rdmarpc.bench.load.CellResult> ours = ReportFixtures.ours().stream().map(r -> r.withCpu(2.5, 3.25)).toList();
        List<dev.rdmarpc.bench.load.CellResult> theirs = ReportFixtures.theirs().stream().map(r -> r.withCpu(5, Double.NaN)).toList();
        Report report = new Report(ReportFixtures.info(true), ours, theirs);
        List<String> table = render(TableFormat::write, report).lines().toList();
        String head = table.stream().filter(l -> l.startsWith("request")).findFirst().orElseThrow();
        assertTrue(head.contains("cpu/call(us)") && head.contains("srv-cpu/call(us)"), head);
        String first = table.get(table.indexOf(head) + 1);
        assertTrue(first.contains("2.50") && first.contains("3.25"), first);
        String speedup = table.get(table.indexOf(head) + 3);
        assertTrue(speedup.contains("2.00x"), "theirs 5 us / ours 2.5 us: " + speedup);
        assertTrue(table.stream().anyMatch(l -> l.startsWith("cpu/call: CPU time")), String.join("\n", table));
        List<String> csv = render(CsvFormat::write, report).lines().toList();
        assertTrue(csv.get(1).endsWith(",2.5,3.25"), csv.get(1));
        assertTrue(csv.get(2).endsWith(",5,"), csv.get(2));
        String json = render(JsonFormat::write, report);
        assertTrue(json.contains("\"cpu_us_per_call\": 2.5, \"server_cpu_us_per_call\": 3.25"), json);
        assertTrue(json.contains("\"cpu_us_per_call\": 5, \"server_cpu_us_per_call\": null"), json);
        // not measured anywhere: no column
        String plain = render(TableFormat::write, new Report(ReportFixtures.info(true), ReportFixtures.ours(),
                ReportFixtures.theirs()));
        assertTrue(!plain.contains("cpu/call"), plain);
    }

    @Test
    void csvHasOneLinePerCellAndStack() {
        Report report = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        List<String> lines = render(CsvFormat::write, report).lines().toList();
        assertEquals(CsvFormat.HEADER, lines.get(0));
        assertEquals(1 + 4 * 3, lines.size());
        assertEquals("rdmarpc-tcp,128,128,1,1,1,1,0.01024,95.5,120.25,180,410,900,10000,20000,0,2,,0,1,,,", lines.get(1));
        assertEquals("grpc-java,128,128,1,1,1,1,0.00512,191,240.5,360,820,1500,5000,10000,0,2,,0,1,,,", lines.get(2));
        assertEquals("speedup,128,,1,,,,2,2,2,2,2,,2,,,,,,,,,", lines.get(3));
        assertTrue(lines.get(lines.size() - 2).endsWith(",0,0.25,,,"), lines.get(lines.size() - 2));
        for (String l : lines) {
            assertEquals(22, l.chars().filter(c -> c == ',').count(), l);
        }
        String plain = render(CsvFormat::write, new Report(ReportFixtures.info(false), ReportFixtures.ours(), List.of()));
        assertEquals(5, plain.lines().count());
        assertFalse(plain.contains("speedup"));
    }

    @Test
    void jsonIsWellFormedAndCarriesEveryCell() {
        Report report = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        String json = render(JsonFormat::write, report);
        Object parsed = MiniJson.parse(json);
        assertTrue(parsed instanceof java.util.Map);
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) parsed;
        assertEquals("closed-loop", root.get("load"));
        assertEquals("grpc-java", root.get("baseline"));
        List<?> results = (List<?>) root.get("results");
        assertEquals(4, results.size());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> first = (java.util.Map<String, Object>) results.get(0);
        assertEquals(128.0, first.get("request_bytes"));
        assertEquals(10000.0, first.get("qps"));
        assertEquals(180.0, first.get("p99_us"));
        assertEquals(4, ((List<?>) root.get("baseline_results")).size());
        assertEquals(4, ((List<?>) root.get("speedup")).size());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> lastTheirs = (java.util.Map<String, Object>) ((List<?>) root.get("baseline_results")).get(3);
        assertEquals("DEADLINE_EXCEEDED", lastTheirs.get("first_error"));
    }

    @Test
    void streamTableHasMessageRatesGbpsAndGaps() {
        Report plain = new Report(ReportFixtures.streamInfo(false), ReportFixtures.oursStreams(), List.of());
        String out = render(TableFormat::write, plain);
        assertEquals(List.of(
                "message  streams   msgs/s  throughput(Gb/s)  gap-P50(us)  gap-P90(us)  gap-P99(us)  gap-P99.9(us)",
                "128B           1  1000000              1.02          0.1          0.2          4.0            170",
                "128B          16  1500000              1.54          0.1          0.5         16.5            710",
                "32K           16    40000             10.49          0.2          300         1800           9000"),
                out.lines().filter(l -> !l.startsWith("#")).toList());
        assertTrue(out.contains("# server streaming, tcp loopback 127.0.0.1; per stream one small request, then the "
                + "server sends messages of the given size as fast as the stream's flow control allows, until the bench "
                + "cancels the stream at the end of the cell\n"), out);
        assertTrue(out.contains("# 4 connection(s), 1 I/O thread(s) per side, the streams spread over them; warm-up 1s + "
                + "measured 2s per cell\n"), out);
        assertTrue(out.contains("throughput = payload bytes received x 8"), out);
        assertFalse(out.contains("QPS") || out.contains("closed loop") || out.contains("response"), out);

        Report both = new Report(ReportFixtures.streamInfo(true), ReportFixtures.oursStreams(), ReportFixtures.theirsStreams());
        List<String> rows = render(TableFormat::write, both).lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals("message  streams  stack         msgs/s  throughput(Gb/s)  gap-P50(us)  gap-P90(us)  gap-P99(us)  "
                + "gap-P99.9(us)  errors", rows.get(0));
        assertEquals("                  grpc-java     250000              0.26          2.0          5.0         44.0  "
                + "         4200       0", rows.get(2));
        assertEquals("                  speedup        4.00x             4.00x       20.00x       25.00x       11.00x  "
                + "       24.71x", rows.get(3));
        String text = render(TableFormat::write, both);
        assertTrue(text.contains("speedup: ours over grpc-java per column; above 1 favours rdmarpc-tcp (msgs/s and "
                + "throughput: ours/theirs; gaps: theirs/ours)"), text);
        assertTrue(text.contains("! grpc-java 32K x16 streams: 1 failed stream(s), first: CANCELLED: too slow"), text);
    }

    @Test
    void streamCsvAndJsonCarryMessagesAndPayload() {
        Report report = new Report(ReportFixtures.streamInfo(true), ReportFixtures.oursStreams(), ReportFixtures.theirsStreams());
        List<String> lines = render(CsvFormat::write, report).lines().toList();
        assertEquals(CsvFormat.STREAM_HEADER, lines.get(0));
        assertEquals(1 + 3 * 3, lines.size());
        assertEquals("rdmarpc-tcp,128,1,1,1,1000000,1.024,0.1,0.2,4,170,900,2000000,256000000,0,2,,,", lines.get(1));
        assertEquals("speedup,128,1,,,4,4,20,25,11,24.7059,,,,,,,,", lines.get(3));
        for (String l : lines) {
            assertEquals(18, l.chars().filter(c -> c == ',').count(), l);
        }
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) MiniJson.parse(render(JsonFormat::write, report));
        assertEquals("stream", root.get("workload"));
        assertFalse(root.containsKey("load"), "no closed or open loop");
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> settings = (java.util.Map<String, Object>) root.get("settings");
        assertFalse(settings.containsKey("pipeline") || settings.containsKey("response_bytes"), settings.toString());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> last = (java.util.Map<String, Object>) ((List<?>) root.get("results")).get(2);
        assertEquals(32768.0, last.get("message_bytes"));
        assertEquals(16.0, last.get("streams"));
        assertEquals(40000.0, last.get("msgs_per_s"));
        assertEquals(80000.0 * 32768, last.get("payload_bytes"));
        assertEquals(1800.0, last.get("gap_p99_us"));
        assertEquals(3, ((List<?>) root.get("speedup")).size());
        assertEquals("echo", ((java.util.Map<?, ?>) MiniJson.parse(render(JsonFormat::write,
                new Report(ReportFixtures.info(false), ReportFixtures.ours(), List.of())))).get("workload"));
    }

    /** 128B at 1000/s (kept up) and 50000/s (fell short, with late calls), at most 64 in flight. */
    private static List<dev.rdmarpc.bench.load.CellResult> openLoop() {
        return List.of(
                new dev.rdmarpc.bench.load.CellResult("rdmarpc-tcp", 128, 128, 64, 64, 4, 1, 2000, 0, 2.0, 1000, 95.5,
                        120, 180, 410, 900, null, 1000, 0),
                new dev.rdmarpc.bench.load.CellResult("rdmarpc-tcp", 128, 128, 64, 64, 4, 1, 60000, 0, 2.0, 30000, 9000,
                        42000, 51000, 52000, 53000, null, 50000, 41234));
    }

    @Test
    void openLoopTableSaysSoAndMarksRowsShortOfTheTarget() {
        Report report = new Report(ReportFixtures.info(false), openLoop(), List.of());
        String out = render(TableFormat::write, report);
        List<String> rows = out.lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals(List.of(
                "request  target(req/s)  max-in-flight  throughput(Gb/s)  P50(us)  P90(us)  P99(us)  P99.9(us)     QPS   late",
                "128B              1000             64             0.001     95.5      120      180        410    1000      0",
                "128B             50000             64             0.031     9000    42000    51000      52000  30000<  41234",
                "< achieved under 90% of the target rate: the stack (or the bound on calls in flight) could not keep up; "
                        + "latencies include the queueing",
                "late: measured calls sent after their due time because max-in-flight calls were outstanding "
                        + "(or still unsent when the run gave up on them); their wait counts in their latency"),
                rows);
        assertTrue(out.contains("# echo calls, tcp loopback 127.0.0.1; open loop at 1000, 50000 req/s: calls due on a fixed"),
                out);
        assertFalse(out.contains("closed loop"), out);
        assertTrue(out.contains("from each call's due time to its response (coordinated omission accounted for)"), out);
    }

    @Test
    void openLoopTableWithBaselineKeepsColumnsAligned() {
        List<dev.rdmarpc.bench.load.CellResult> theirs = List.of(
                new dev.rdmarpc.bench.load.CellResult("grpc-java", 128, 128, 64, 64, 4, 1, 2000, 0, 2.0, 1000, 191,
                        240, 360, 820, 1500, null, 1000, 2),
                new dev.rdmarpc.bench.load.CellResult("grpc-java", 128, 128, 64, 64, 4, 1, 20000, 0, 2.0, 10000, 90000,
                        99000, 99500, 99900, 99990, null, 50000, 49000));
        String out = render(TableFormat::write, new Report(ReportFixtures.info(true), openLoop(), theirs));
        List<String> rows = out.lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals("request  target(req/s)  max-in-flight  stack        throughput(Gb/s)  P50(us)  P90(us)  P99(us)"
                + "  P99.9(us)     QPS   late", rows.get(0));
        assertEquals("128B              1000             64  rdmarpc-tcp             0.001     95.5      120      180"
                + "        410    1000      0", rows.get(1));
        assertEquals("                                       grpc-java               0.001      191      240      360"
                + "        820    1000      2", rows.get(2));
        assertEquals("                                       speedup                 1.00x    2.00x    2.00x    2.00x"
                + "      2.00x   1.00x", rows.get(3));
    }

    @Test
    void openLoopCsvAndJsonCarryTheTargetRate() {
        Report report = new Report(ReportFixtures.info(false), openLoop(), List.of());
        List<String> lines = render(CsvFormat::write, report).lines().toList();
        assertTrue(lines.get(0).endsWith(",seconds,target_qps,late_calls,caller_balance,tls,cpu_us_per_call,server_cpu_us_per_call"), lines.get(0));
        assertTrue(lines.get(2).endsWith(",30000,60000,0,2,50000,41234,,,,"), lines.get(2));
        String json = render(JsonFormat::write, report);
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) MiniJson.parse(json);
        assertEquals("open-loop", root.get("load"));
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> second = (java.util.Map<String, Object>) ((List<?>) root.get("results")).get(1);
        assertEquals(50000.0, second.get("target_qps"));
        assertEquals(41234.0, second.get("late_calls"));
        String closed = render(JsonFormat::write, new Report(ReportFixtures.info(false), ReportFixtures.ours(), List.of()));
        assertTrue(closed.contains("\"target_qps\": null"), closed);
        assertTrue(closed.contains("\"caller_balance\": 0.98"), closed);
        assertTrue(json.contains("\"caller_balance\": null"), json);
    }

    @Test
    void jsonWritesNullForMissingFiguresAndEscapesStrings() {
        var empty = new dev.rdmarpc.bench.load.CellResult("a\"b", 4, 4, 1, 1, 1, 1, 0, 2, 1.0, 0, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, "line1\nline2");
        String json = render(JsonFormat::write, new Report(ReportFixtures.info(false), List.of(empty), List.of()));
        assertTrue(json.contains("\"p99_us\": null"), json);
        assertTrue(json.contains("\"stack\": \"a\\\"b\""), json);
        assertTrue(json.contains("\"first_error\": \"line1\\nline2\""), json);
        MiniJson.parse(json);
    }

    @Test
    void everyFormatSaysWhetherTlsWasOn() {
        Report tls = new Report(ReportFixtures.tlsInfo(), ReportFixtures.ours(), ReportFixtures.theirs());
        Report plain = new Report(ReportFixtures.info(true), ReportFixtures.ours(), ReportFixtures.theirs());
        assertTrue(TableFormat.header(tls).contains("TLS: TLSv1.3 only, the JDK's TLS on every stack; negotiated: "
                + "rdmarpc-tcp TLSv1.3 TLS_AES_256_GCM_SHA384, grpc-java TLSv1.3 TLS_AES_256_GCM_SHA384"), TableFormat.header(tls).toString());
        assertFalse(TableFormat.header(plain).stream().anyMatch(l -> l.startsWith("TLS")), TableFormat.header(plain).toString());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) MiniJson.parse(render(JsonFormat::write, tls));
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> t = (java.util.Map<String, Object>) root.get("tls");
        assertEquals("TLSv1.3", t.get("protocols"));
        assertTrue(String.valueOf(t.get("negotiated")).startsWith("rdmarpc-tcp TLSv1.3 "), String.valueOf(t));
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> plainRoot = (java.util.Map<String, Object>) MiniJson.parse(render(JsonFormat::write, plain));
        assertTrue(plainRoot.containsKey("tls") && plainRoot.get("tls") == null, "plain: \"tls\": null");
        List<String> csv = render(CsvFormat::write, tls).lines().toList();
        for (String l : csv.subList(1, csv.size())) {
            assertTrue(l.endsWith(",TLSv1.3,,"), l);
        }
    }
}
