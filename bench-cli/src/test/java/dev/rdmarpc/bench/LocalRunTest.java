package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** Short real runs of the CLI over TCP loopback: rdmarpc, the gRPC and Netty baselines, and server + client. */
@Timeout(120)
class LocalRunTest {
    @TempDir
    Path dir;

    @Test
    void localTcpRunPrintsTheTableWithRealFigures() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--transport", "tcp", "--sizes", "4K", "--concurrency", "2",
                "--warmup", "200ms", "--duration", "500ms", "--initial-warmup", "200ms");
        assertEquals(0, r.code(), r.err());
        List<String> rows = r.out().lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals(4, rows.size(), r.out()); // the header, the cell, the notes on the balance and the CPU per call
        assertTrue(rows.get(0).startsWith("request  concurrency  throughput(Gb/s)"), rows.get(0));
        String[] cells = rows.get(1).trim().split("\\s+");
        assertEquals("4K", cells[0]);
        assertEquals("2", cells[1]);
        double qps = Double.parseDouble(cells[7]);
        assertTrue(qps > 10, "QPS " + qps);
        assertTrue(Double.parseDouble(cells[2]) > 0, "throughput");
        double balance = Double.parseDouble(cells[8]);
        assertTrue(balance > 0 && balance <= 1, "balance " + balance);
        assertTrue(rows.get(2).startsWith("balance: "), rows.get(2));
        assertTrue(rows.get(0).trim().endsWith("balance  cpu/call(us)"), rows.get(0));
        double cpu = Double.parseDouble(cells[9]);
        assertTrue(cpu > 0 && cpu < 1e6, "CPU per call of client and server in one JVM: " + cpu);
        assertTrue(rows.get(3).startsWith("cpu/call: "), rows.get(3));
        assertTrue(r.out().contains("# rdmarpc-tcp: "), r.out());
    }

    @Test
    void localStreamsReportMessageRatesFor128BAnd32KWithOneAnd16Streams() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--workload", "stream", "--sizes", "128,32K", "--concurrency", "1,16",
                "--warmup", "200ms", "--duration", "300ms", "--initial-warmup", "200ms", "--no-progress");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("# rdmarpc-tcp: rdmarpc "), r.out());
        assertTrue(r.out().contains("ClientStream.receive on a virtual thread per stream"), r.out());
        assertTrue(r.out().contains("# server streaming, tcp loopback 127.0.0.1"), r.out());
        List<String> rows = r.out().lines().filter(l -> !l.startsWith("#")).toList();
        assertEquals(List.of("message", "streams", "msgs/s", "throughput(Gb/s)", "gap-P50(us)", "gap-P90(us)",
                "gap-P99(us)", "gap-P99.9(us)", "cpu/msg(us)"), List.of(rows.get(0).trim().split("\\s+")), r.out());
        assertEquals(6, rows.size(), r.out()); // the header, four cells, the note on the CPU per message
        List<String> cells = List.of("128B 1", "128B 16", "32K 1", "32K 16");
        for (int i = 0; i < cells.size(); i++) {
            String[] f = rows.get(i + 1).trim().split("\\s+");
            assertEquals(cells.get(i), f[0] + " " + f[1], r.out());
            assertEquals(9, f.length, "no errors column: " + r.out());
            double msgs = Double.parseDouble(f[2]);
            double gbps = Double.parseDouble(f[3]);
            assertTrue(msgs > 0, "msgs/s of " + cells.get(i) + ": " + r.out());
            int size = f[0].equals("128B") ? 128 : 32768;
            // The table rounds Gb/s to 2 decimals (3 below 0.1).
            assertEquals(msgs * size * 8 / 1e9, gbps, 0.0051, "Gb/s = msgs/s x size x 8: " + r.out());
        }
    }

    @ParameterizedTest
    @CsvSource({"grpc, grpc-java", "grpc-rdmarpc, grpc-rdmarpc"})
    void localStreamsSideBySideWithGrpc(String baseline, String baselineStack) {
        // gRPC-java's first streams on a cold JVM are slow (class loading, the interpreter): a longer initial warm-up.
        BenchCliTest.Run r = BenchCliTest.run("local", "--workload", "stream", "--baseline", baseline, "--sizes", "128,32K",
                "--concurrency", "1,16", "--warmup", "300ms", "--duration", "400ms", "--initial-warmup", "1500ms",
                "--format", "json", "--no-progress");
        assertEquals(0, r.code(), r.err());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) dev.rdmarpc.bench.report.MiniJson.parse(r.out());
        assertEquals("stream", root.get("workload"), r.out());
        assertTrue(root.get("baseline_description").toString().contains("isReady()"), r.out());
        for (String key : List.of("results", "baseline_results")) {
            List<?> cells = (List<?>) root.get(key);
            assertEquals(4, cells.size(), r.out());
            for (Object o : cells) {
                @SuppressWarnings("unchecked")
                java.util.Map<String, Object> c = (java.util.Map<String, Object>) o;
                assertEquals(0.0, c.get("errors"), r.out());
                assertTrue((Double) c.get("msgs_per_s") > 0, "msgs/s of " + c);
                assertTrue((Double) c.get("messages") > 0, "messages of " + c);
                assertEquals((Double) c.get("messages") * (Double) c.get("message_bytes"), (Double) c.get("payload_bytes"),
                        "payload bytes of " + c);
            }
        }
        assertEquals(baselineStack, ((java.util.Map<?, ?>) ((List<?>) root.get("baseline_results")).get(3)).get("stack"));
        assertEquals(4, ((List<?>) root.get("speedup")).size(), r.out());
    }

    @Test
    void clientStreamsFromAServerCommand() throws Exception {
        StringWriter serverOut = new StringWriter();
        AtomicInteger serverCode = new AtomicInteger(-1);
        Thread server = new Thread(() -> {
            CommandLine cl = BenchCli.commandLine();
            cl.setOut(new PrintWriter(serverOut, true));
            serverCode.set(cl.execute("server", "--listen", "127.0.0.1:0", "--time-limit", "12s", "--max-message", "64K",
                    "--baseline", "grpc", "--periodic-gc", "0s"));
        });
        server.start();
        Pattern listening = Pattern.compile("rdmarpc-tcp echo server listening on 127\\.0\\.0\\.1:(\\d+)(?s).*"
                + "grpc-java echo server listening on 127\\.0\\.0\\.1:(\\d+)");
        Matcher m = listening.matcher("");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!(m = listening.matcher(serverOut.toString())).find() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(m.find(0), "server announced its ports: " + serverOut);
        BenchCliTest.Run r = BenchCliTest.run("client", "--workload", "stream", "--connect", "127.0.0.1:" + m.group(1),
                "--baseline", "grpc", "--grpc-connect", "127.0.0.1:" + m.group(2), "--sizes", "32K", "--concurrency", "3",
                "--connections", "2", "--warmup", "100ms", "--duration", "300ms", "--initial-warmup", "0s",
                "--format", "csv");
        assertEquals(0, r.code(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(4, lines.size(), r.out());
        assertTrue(lines.get(0).startsWith("stack,message_bytes,streams,connections,runs,msgs_per_s,throughput_gbps,gap_p50_us"),
                lines.get(0));
        for (String stack : List.of("rdmarpc-tcp", "grpc-java")) {
            String[] f = lines.stream().filter(l -> l.startsWith(stack + ",")).findFirst().orElseThrow().split(",", -1);
            assertEquals(List.of("32768", "3", "2", "1"), List.of(f[1], f[2], f[3], f[4]), String.join(",", f));
            assertTrue(Double.parseDouble(f[5]) > 0, "msgs/s: " + String.join(",", f));
            assertEquals("0", f[14], "errors: " + String.join(",", f));
        }
        assertTrue(lines.get(3).startsWith("speedup,32768,3,"), lines.get(3));
        // A message larger than the server's --max-message: the stream fails, and the run says so.
        BenchCliTest.Run big = BenchCliTest.run("client", "--workload", "stream", "--connect", "127.0.0.1:" + m.group(1),
                "--sizes", "128K", "--concurrency", "1", "--warmup", "0s", "--duration", "200ms", "--initial-warmup", "0s");
        assertEquals(1, big.code(), big.out() + big.err());
        assertTrue(big.out().contains("! rdmarpc-tcp 128K x1 streams: 1 failed stream(s), first: "), big.out());
        assertTrue(big.err().contains("some streams failed"), big.err());
        server.join(30_000);
        assertEquals(0, serverCode.get());
    }

    @Test
    void localOpenLoopReachesItsTargetRate() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--rate", "2000", "--sizes", "128", "--warmup", "500ms",
                "--duration", "1s", "--initial-warmup", "500ms");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("; open loop at 2000 req/s: "), r.out());
        List<String> rows = r.out().lines().filter(l -> !l.startsWith("#")).toList();
        assertTrue(rows.get(0).startsWith("request  target(req/s)  max-in-flight  throughput(Gb/s)  P50(us)"), rows.get(0));
        assertTrue(rows.get(0).endsWith("QPS  late"), rows.get(0));
        String[] cells = rows.get(1).trim().split("\\s+");
        assertEquals("128B", cells[0]);
        assertEquals("2000", cells[1]);
        assertEquals("64", cells[2]);
        for (int c = 4; c <= 7; c++) {
            assertTrue(Double.parseDouble(cells[c]) > 0, "latency percentile in column " + c + ": " + rows.get(1));
        }
        double qps = Double.parseDouble(cells[8].replace("<", ""));
        // Loose bounds: a noisy 2-core machine; the schedule, not the machine, sets the rate when it keeps up.
        assertTrue(qps >= 1000 && qps <= 2200, "achieved " + qps + " of 2000/s: " + r.out());
        assertTrue(Long.parseLong(cells[9]) >= 0);
    }

    @Test
    void jsonWithBaselineAndPlot() throws Exception {
        Path png = dir.resolve("run.png");
        BenchCliTest.Run r = BenchCliTest.run("local", "--sizes", "128", "--concurrency", "1", "--warmup", "200ms",
                "--duration", "400ms", "--initial-warmup", "300ms", "--baseline", "grpc", "--format", "json",
                "--plot", png.toString());
        assertEquals(0, r.code(), r.err());
        String json = r.out();
        assertTrue(json.contains("\"stack\": \"rdmarpc-tcp\""), json);
        assertTrue(json.contains("\"baseline\": \"grpc-java\""), json);
        assertTrue(json.contains("\"speedup\": ["), json);
        assertTrue(json.contains("\"errors\": 0"), json);
        assertTrue(Files.size(png) > 5_000, "chart written");
        assertTrue(r.err().contains("chart written to " + png), r.err());
    }

    @Test
    void localTableWithGrpcOverRdmarpcHasItsRowsAndSpeedups() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--sizes", "128", "--concurrency", "4", "--warmup", "200ms",
                "--duration", "400ms", "--initial-warmup", "500ms", "--baseline", "grpc-rdmarpc", "--no-progress");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("# grpc-rdmarpc: gRPC-java 1.") && r.out().contains("over rdmarpc's gRPC transport on TCP"),
                r.out());
        List<List<String>> rows = r.out().lines().filter(l -> !l.startsWith("#"))
                .map(l -> List.of(l.trim().split("\\s+"))).toList();
        assertEquals(7, rows.size(), r.out());
        assertEquals(List.of("128B", "4", "rdmarpc-tcp"), rows.get(1).subList(0, 3), r.out());
        assertEquals("grpc-rdmarpc", rows.get(2).get(0), r.out());
        assertEquals("speedup", rows.get(3).get(0), r.out());
        assertEquals(List.of(11, 9, 8), rows.subList(1, 4).stream().map(List::size).toList(), r.out());
        for (List<String> row : rows.subList(1, 3)) {
            assertTrue(Double.parseDouble(row.get(row.size() - 3)) > 0, "QPS: " + row);
            assertTrue(Double.parseDouble(row.get(row.size() - 1)) > 0, "CPU per call: " + row);
        }
        assertTrue(Double.parseDouble(rows.get(3).get(6).replace("x", "")) > 0, "QPS ratio: " + rows.get(3));
        assertTrue(r.out().contains("speedup: ours over grpc-rdmarpc per column; above 1 favours rdmarpc-tcp"), r.out());
    }

    @Test
    void grpcOverRdmarpcRefusesTlsAndTheNettyAddressOption() {
        BenchCliTest.Run tls = BenchCliTest.run("local", "--tls", "--baseline", "grpc-rdmarpc", "--sizes", "128");
        assertEquals(2, tls.code(), tls.err());
        assertTrue(tls.err().contains("--tls does not apply to --baseline grpc-rdmarpc"), tls.err());
        BenchCliTest.Run netty = BenchCliTest.run("client", "--baseline", "grpc-rdmarpc", "--netty-connect", "127.0.0.1:9");
        assertEquals(2, netty.code(), netty.err());
        assertTrue(netty.err().contains("--netty-connect only applies to --baseline netty"), netty.err());
        BenchCliTest.Run unknown = BenchCliTest.run("local", "--baseline", "grpc-foo");
        assertEquals(2, unknown.code(), unknown.err());
        assertTrue(unknown.err().contains("'grpc-foo' is not a baseline: expected one of [grpc, netty, grpc-rdmarpc]"), unknown.err());
    }

    @Test
    void localTableWithTheNettyBaselineHasItsRowsAndSpeedups() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--sizes", "128", "--concurrency", "4", "--warmup", "200ms",
                "--duration", "400ms", "--initial-warmup", "300ms", "--baseline", "netty", "--no-progress");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("# netty-nio: Netty 4.1."), r.out());
        // Header, then ours, theirs and the speed-up, then the note on the speed-up.
        List<List<String>> rows = r.out().lines().filter(l -> !l.startsWith("#"))
                .map(l -> List.of(l.trim().split("\\s+"))).toList();
        assertEquals(7, rows.size(), r.out());
        assertEquals(List.of("128B", "4", "rdmarpc-tcp"), rows.get(1).subList(0, 3), r.out());
        assertEquals("netty-nio", rows.get(2).get(0), r.out());
        assertEquals("speedup", rows.get(3).get(0), r.out());
        // Eight figures each: throughput, four percentiles, QPS, the balance, the CPU per call (the speed-up
        // row: the ratios of the first six and of the CPU per call).
        assertEquals(List.of(11, 9, 8), rows.subList(1, 4).stream().map(List::size).toList(), r.out());
        for (List<String> row : rows.subList(1, 3)) {
            assertTrue(Double.parseDouble(row.get(row.size() - 3)) > 0, "QPS: " + row);
            double balance = Double.parseDouble(row.get(row.size() - 2));
            assertTrue(balance > 0 && balance <= 1, "balance: " + row);
            assertTrue(Double.parseDouble(row.get(row.size() - 1)) > 0, "CPU per call: " + row);
        }
        assertTrue(Double.parseDouble(rows.get(3).get(6).replace("x", "")) > 0, "QPS ratio: " + rows.get(3));
        assertEquals("balance:", rows.get(4).get(0), r.out());
        assertEquals("cpu/call:", rows.get(5).get(0), r.out());
        assertEquals("speedup:", rows.get(6).get(0), r.out());
        assertTrue(r.out().contains("speedup: ours over netty-nio per column; above 1 favours rdmarpc-tcp"), r.out());
    }

    @ParameterizedTest
    @CsvSource({"grpc, grpc-java, grpc", "netty, netty-nio, netty", "grpc-rdmarpc, grpc-rdmarpc, grpc"})
    void serverAndClientInSeparateCommands(String baseline, String baselineStack, String addressOption) throws Exception {
        StringWriter serverOut = new StringWriter();
        AtomicInteger serverCode = new AtomicInteger(-1);
        Thread server = new Thread(() -> {
            CommandLine cl = BenchCli.commandLine();
            cl.setOut(new PrintWriter(serverOut, true));
            serverCode.set(cl.execute("server", "--listen", "127.0.0.1:0", "--time-limit", "12s", "--max-message", "64K",
                    "--baseline", baseline));
        });
        server.start();
        Pattern listening = Pattern.compile("rdmarpc-tcp echo server listening on 127\\.0\\.0\\.1:(\\d+)");
        Matcher m = listening.matcher("");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!(m = listening.matcher(serverOut.toString())).find() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(m.find(0), "server announced its port: " + serverOut);
        Pattern baselineListening = Pattern.compile(baselineStack + " echo server listening on 127\\.0\\.0\\.1:(\\d+)");
        Matcher g = baselineListening.matcher(serverOut.toString());
        long gDeadline = System.nanoTime() + 10_000_000_000L;
        while (!g.find() && System.nanoTime() < gDeadline) {
            Thread.sleep(20);
            g = baselineListening.matcher(serverOut.toString());
        }
        int baselinePort = Integer.parseInt(g.group(1));
        assertTrue(baselinePort > 1024, "port 0 means any free port for the baseline too, not port 1 or 2: " + baselinePort);
        BenchCliTest.Run r = BenchCliTest.run("client", "--connect", "127.0.0.1:" + m.group(1), "--baseline", baseline,
                "--" + addressOption + "-connect", "127.0.0.1:" + baselinePort, "--sizes", "1K",
                "--concurrency", "4", "--warmup", "100ms", "--duration", "300ms", "--initial-warmup", "0s",
                "--format", "csv");
        assertEquals(0, r.code(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(4, lines.size(), r.out());
        assertTrue(lines.get(1).startsWith("rdmarpc-tcp,1024,1024,4,4,"), lines.get(1));
        assertTrue(lines.get(2).startsWith(baselineStack + ",1024,1024,4,4,"), lines.get(2));
        assertTrue(lines.get(3).startsWith("speedup,1024,"), lines.get(3));
        server.join(30_000);
        assertEquals(0, serverCode.get());
    }

    @Test
    void clientWithoutServerSaysSoInOneSentence() {
        BenchCliTest.Run r = BenchCliTest.run("client", "--connect", "127.0.0.1:1", "--sizes", "128", "--concurrency", "1",
                "--duration", "100ms", "--initial-warmup", "0s");
        assertEquals(1, r.code());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("bench-cli client: "), r.err());
    }

    @Test
    void localTlsRunsBothStacksOverTls13WithTheSameCipherSuite() {
        BenchCliTest.Run r = BenchCliTest.run("local", "--tls", "--baseline", "grpc", "--sizes", "1K", "--concurrency", "2",
                "--warmup", "200ms", "--duration", "400ms", "--initial-warmup", "300ms", "--format", "json");
        assertEquals(0, r.code(), r.err());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> root = (java.util.Map<String, Object>) dev.rdmarpc.bench.report.MiniJson.parse(r.out());
        @SuppressWarnings("unchecked")
        java.util.Map<String, Object> tls = (java.util.Map<String, Object>) root.get("tls");
        assertEquals("TLSv1.3", tls.get("protocols"), r.out());
        // What each server saw its first connection negotiate: TLS really ran, on both stacks, with one suite.
        Matcher m = Pattern.compile("rdmarpc-tcp TLSv1\\.3 (TLS_\\w+), grpc-java TLSv1\\.3 (TLS_\\w+)")
                .matcher(String.valueOf(tls.get("negotiated")));
        assertTrue(m.matches(), String.valueOf(tls.get("negotiated")));
        assertEquals(m.group(1), m.group(2), "the same cipher suite on both stacks");
        assertTrue(r.out().contains("\"errors\": 0"), r.out());
        assertTrue(!r.out().contains("\"calls\": 0,"), r.out());
        assertTrue(root.get("stack_description").toString().contains("TLS TLSv1.3"), r.out());
    }

    @Test
    void serverWithThrowawayCertificateServesTlsClientsAndRefusesPlainOnes() throws Exception {
        StringWriter serverOut = new StringWriter();
        AtomicInteger serverCode = new AtomicInteger(-1);
        Thread server = new Thread(() -> {
            CommandLine cl = BenchCli.commandLine();
            cl.setOut(new PrintWriter(serverOut, true));
            serverCode.set(cl.execute("server", "--tls", "--listen", "127.0.0.1:0", "--time-limit", "15s",
                    "--max-message", "64K", "--periodic-gc", "0s"));
        });
        server.start();
        Pattern listening = Pattern.compile("rdmarpc-tcp echo server listening on 127\\.0\\.0\\.1:(\\d+)");
        Matcher m = listening.matcher("");
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!(m = listening.matcher(serverOut.toString())).find() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(m.find(0), "server announced its port: " + serverOut);
        Matcher ca = Pattern.compile("clients trust (\\S+ca\\.pem) ").matcher(serverOut.toString());
        assertTrue(ca.find(), "server printed its CA file: " + serverOut);
        Path caFile = Path.of(ca.group(1));
        assertTrue(Files.isRegularFile(caFile), caFile.toString());
        String connect = "127.0.0.1:" + m.group(1);
        BenchCliTest.Run tls = BenchCliTest.run("client", "--tls", "--tls-trust", caFile.toString(), "--connect", connect,
                "--sizes", "1K", "--concurrency", "2", "--warmup", "100ms", "--duration", "300ms", "--initial-warmup", "0s",
                "--format", "csv");
        assertEquals(0, tls.code(), tls.err());
        List<String> lines = tls.out().lines().toList();
        assertTrue(lines.get(0).endsWith(",late_calls,caller_balance,tls,cpu_us_per_call,server_cpu_us_per_call"), lines.get(0));
        assertTrue(lines.get(1).startsWith("rdmarpc-tcp,1024,1024,2,2,") && lines.get(1).matches(".*,0,(1|0\\.\\d+),TLSv1\\.3,[0-9.]+,"),
                lines.get(1));
        BenchCliTest.Run plain = BenchCliTest.run("client", "--connect", connect, "--sizes", "128", "--concurrency", "1",
                "--warmup", "0s", "--duration", "200ms", "--initial-warmup", "0s");
        assertEquals(1, plain.code(), plain.out());
        // The server's refusal or the client's reading of its TLS alert, whichever comes first.
        assertTrue(plain.out().matches("(?s).*! rdmarpc-tcp 128B x1: \\d+ failed call\\(s\\), first: .*requires TLS.*"),
                plain.out());
        BenchCliTest.Run untrusting = BenchCliTest.run("client", "--tls", "--connect", connect, "--sizes", "128",
                "--concurrency", "1", "--duration", "200ms", "--initial-warmup", "0s");
        assertEquals(1, untrusting.code(), untrusting.err());
        assertTrue(untrusting.err().contains("not trusted"), untrusting.err());
        server.join(30_000);
        assertEquals(0, serverCode.get());
        assertTrue(!Files.exists(caFile.getParent()), "the throwaway certificates are removed when the server stops");
    }

    @Test
    void tlsOptionsThatDoNotGoTogetherAreBadOptions() throws Exception {
        Path ca = dir.resolve("ca.pem");
        Files.writeString(ca, "not a certificate");
        for (String[] args : List.of(
                new String[] {"local", "--tls", "--baseline", "netty"},
                new String[] {"server", "--tls", "--baseline", "netty"},
                new String[] {"server", "--tls-cert", ca.toString(), "--tls-key", ca.toString()},
                new String[] {"server", "--tls", "--tls-cert", ca.toString()},
                new String[] {"server", "--tls", "--tls-cert", ca.toString(), "--tls-key", ca.toString()},
                new String[] {"client", "--tls-trust", ca.toString()},
                new String[] {"client", "--tls", "--tls-trust", ca.toString()},
                new String[] {"client", "--tls-no-verify-hostname"})) {
            BenchCliTest.Run r = BenchCliTest.run(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().contains("--tls"), r.err());
        }
    }
}
