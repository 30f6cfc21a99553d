package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.load.Workload;
import dev.rdmarpc.bench.stack.Transport;
import dev.rdmarpc.ibverbs.verbs.LinkLayer;
import dev.rdmarpc.ibverbs.verbs.Mtu;
import dev.rdmarpc.ibverbs.verbs.PortAttributes;
import dev.rdmarpc.ibverbs.verbs.PortState;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchCliTest {

    /** Runs the CLI with captured streams. */
    record Run(int code, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = BenchCli.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    private static LocalCommand parseLocal(String... args) {
        CommandLine cl = BenchCli.commandLine();
        CommandLine.ParseResult pr = cl.parseArgs(args);
        return (LocalCommand) pr.subcommand().commandSpec().userObject();
    }

    @Test
    void helpPrintsUsage() {
        Run r = run("--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("bench-cli"), r.out());
        for (String cmd : List.of("local", "client", "server", "doctor", "jmh")) {
            assertTrue(r.out().contains("  " + cmd + " "), cmd + " listed: " + r.out());
        }
    }

    @Test
    void defaultsAreTheIssuesMatrix() {
        LocalCommand c = parseLocal("local");
        assertEquals(Transport.tcp, c.matrix.transport);
        assertEquals(List.of(128L, 4096L, 32768L, 262144L, 1048576L, 8388608L), c.matrix.sizes);
        assertEquals(List.of(1, 4, 16, 64, 256), c.matrix.concurrencies());
        assertNull(c.matrix.rate, "closed loop unless --rate is given");
        assertFalse(c.matrix.plan().openLoop());
        assertEquals(Duration.ofSeconds(1), c.matrix.warmup);
        assertEquals(Duration.ofSeconds(2), c.matrix.duration);
        assertEquals(4, c.matrix.connections);
        assertEquals(1, c.matrix.pipeline);
        assertEquals(64L << 20, c.matrix.maxInFlight);
        assertEquals(Duration.ofSeconds(3), c.matrix.initialWarmup());
        assertEquals(Duration.ofSeconds(15), parseLocal("local", "--baseline", "grpc").matrix.initialWarmup(),
                "gRPC-java needs a longer JIT warm-up");
        assertEquals(Duration.ofSeconds(15), parseLocal("local", "--baseline", "netty").matrix.initialWarmup(),
                "every baseline gets the same warm-up");
        assertEquals(Duration.ofSeconds(1),
                parseLocal("local", "--baseline", "grpc", "--initial-warmup", "1s").matrix.initialWarmup());
        assertNull(c.matrix.responseSize);
        assertNull(c.matrix.baseline);
        assertEquals(OutputOptions.Format.table, c.output.format);
        // 3 s initial warm-up, then 30 cells of 3 s: the default run stays well under two minutes.
        assertTrue(c.matrix.plan().estimatedTime().compareTo(Duration.ofSeconds(100)) < 0);
    }

    @Test
    void theIssuesSpellingsParse() {
        LocalCommand c = parseLocal("local", "--transport", "tcp", "--sizes", "128,4K", "--concurrency", "1,16", "--duration", "5s");
        assertEquals(List.of(128L, 4096L), c.matrix.sizes);
        assertEquals(List.of(1, 16), c.matrix.concurrencies());
        assertEquals(Duration.ofSeconds(5), c.matrix.duration);
        LocalCommand r = parseLocal("local", "--transport", "rdma", "--sizes", "128,4K", "--concurrency", "1,16", "--duration", "5s");
        assertEquals(Transport.rdma, r.matrix.transport);
        LocalCommand g = parseLocal("local", "--baseline", "grpc", "--format=csv", "--plot", "x.png", "--response-size", "1KiB",
                "--pipeline", "4", "--connections", "2", "--warmup", "500ms", "--max-in-flight", "1G", "--no-progress");
        assertEquals(MatrixOptions.Baseline.grpc, g.matrix.baseline);
        assertEquals(OutputOptions.Format.csv, g.output.format);
        assertEquals(1024L, g.matrix.responseSize);
        assertEquals(4, g.matrix.pipeline);
        assertEquals(Duration.ofMillis(500), g.matrix.warmup);
        assertEquals(1L << 30, g.matrix.maxInFlight);
        assertFalse(g.output.progressWanted());
        assertEquals(MatrixOptions.Baseline.netty, parseLocal("local", "--baseline", "netty").matrix.baseline);
        assertEquals(MatrixOptions.Baseline.netty, parseLocal("local", "--baseline", "Netty").matrix.baseline);
        assertEquals(MatrixOptions.Baseline.grpcRdmarpc, parseLocal("local", "--baseline", "grpc-rdmarpc").matrix.baseline);
    }

    @Test
    void workloadStreamParsesIntoStreamCells() {
        LocalCommand c = parseLocal("local");
        assertEquals(Workload.echo, c.matrix.workload, "echo calls unless told otherwise");
        assertFalse(c.matrix.plan().stream());
        LocalCommand s = parseLocal("local", "--workload", "stream", "--sizes", "128,32K", "--concurrency", "1,16",
                "--baseline", "grpc");
        assertEquals(Workload.stream, s.matrix.workload);
        var plan = s.matrix.plan();
        assertTrue(plan.stream());
        assertEquals(List.of(128, 128, 32768, 32768), plan.cells().stream().map(x -> x.requestBytes()).toList());
        assertEquals(List.of(1, 16, 1, 16), plan.cells().stream().map(x -> x.callers()).toList());
        assertTrue(plan.cells().stream().allMatch(x -> x.stream()));
        assertEquals(Workload.stream, parseLocal("local", "--workload", "STREAM").matrix.workload);
        // The default --max-in-flight is not an option given: streams run with it.
        LocalCommand big = parseLocal("local", "--workload", "stream", "--sizes", "8M", "--concurrency", "256");
        assertEquals(256, big.matrix.plan().cells().get(0).callers(), "no cap on streams");
    }

    @Test
    void helpSaysWhatTheStreamWorkloadMeasures() {
        for (String cmd : List.of("local", "client")) {
            String help = run(cmd, "--help").out().replaceAll("\\s+", " ");
            assertTrue(help.contains("--workload=echo|stream"), help);
            assertTrue(help.contains("stream: server streaming; per stream the client sends one small request and the "
                    + "server sends messages of a --sizes size as fast as the stream's flow control allows, until the "
                    + "bench cancels the stream at the end of the cell"), help);
            assertTrue(help.contains("messages per second and Gb/s of payload received"), help);
        }
        assertTrue(run("server", "--help").out().replaceAll("\\s+", " ")
                .contains("also serve the streaming method of `client --workload stream`"));
    }

    @Test
    void helpNamesBothBaselines() {
        Run top = run("--help");
        assertTrue(top.out().replaceAll("\\s+", " ").contains("gRPC-java, or a plain Netty NIO echo, the ceiling of plain Java NIO"),
                top.out());
        Run local = run("local", "--help");
        assertTrue(local.out().contains("--baseline=grpc|netty"), local.out());
        assertTrue(local.out().replaceAll("\\s+", " ").contains("netty (a plain Netty NIO echo of length-prefixed frames, "
                + "no RPC layer: the ceiling of plain Java NIO)"), local.out());
        Run server = run("server", "--help");
        assertTrue(server.out().contains("--baseline=grpc|netty"), server.out());
        assertTrue(server.out().contains("--netty-listen=HOST:PORT"), server.out());
        assertTrue(server.out().contains("port + 2"), server.out());
        Run client = run("client", "--help");
        assertTrue(client.out().contains("--netty-connect=HOST:PORT"), client.out());
        assertTrue(client.out().contains("--grpc-connect=HOST:PORT"), client.out());
        assertTrue(local.out().contains("--baseline=grpc|netty|grpc-rdmarpc"), local.out());
        assertTrue(local.out().replaceAll("\\s+", " ").contains("grpc-rdmarpc (the same gRPC-java calls and service over "
                + "rdmarpc's gRPC transport, over --transport, no TLS)"), local.out());
        assertTrue(client.out().contains("+ 3 for grpc-rdmarpc"), client.out());
    }

    @Test
    void eachBaselineHasItsOwnDefaultPort() {
        var rdmarpc = new java.net.InetSocketAddress("127.0.0.1", ServerCommand.DEFAULT_PORT);
        assertEquals(ServerCommand.DEFAULT_PORT + 1, MatrixOptions.Baseline.grpc.defaultAddress(rdmarpc).getPort());
        assertEquals(ServerCommand.DEFAULT_PORT + 2, MatrixOptions.Baseline.netty.defaultAddress(rdmarpc).getPort());
        assertEquals(ServerCommand.DEFAULT_PORT + 3, MatrixOptions.Baseline.grpcRdmarpc.defaultAddress(rdmarpc).getPort());
        assertEquals(rdmarpc.getAddress(), MatrixOptions.Baseline.netty.defaultAddress(rdmarpc).getAddress());
        assertEquals(0, MatrixOptions.Baseline.netty.defaultAddress(new java.net.InetSocketAddress("127.0.0.1", 0)).getPort(),
                "port 0 (any free port) stays 0");
    }

    @Test
    void rateSwitchesToAnOpenLoop() {
        LocalCommand c = parseLocal("local", "--rate", "2000,50K,1M", "--sizes", "128");
        assertEquals(List.of(2000L, 50_000L, 1_000_000L), c.matrix.rate);
        assertEquals(List.of(MatrixOptions.DEFAULT_OPEN_LOOP_BOUND), c.matrix.concurrencies(),
                "with --rate the concurrency is one bound on calls in flight");
        var plan = c.matrix.plan();
        assertTrue(plan.openLoop());
        assertEquals(List.of(2000L, 50_000L, 1_000_000L), plan.cells().stream().map(x -> x.targetQps()).toList());
        assertEquals(List.of(16, 16, 16), parseLocal("local", "--rate", "2000,50K,1M", "--sizes", "128", "-c", "16")
                .matrix.plan().cells().stream().map(x -> x.concurrency()).toList());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "local --sizes 4Q              | '4Q' is not a size",
        "local --sizes 1.5K            | '1.5K' is not a size",
        "local --duration 5x           | '5x' is not a duration",
        "local --duration 0s           | --duration must be longer than 0",
        "local --concurrency 0         | '0' must be at least 1",
        "local --concurrency many      | 'many' is not a whole number",
        "local --transport udp         | expected one of [tcp, rdma]",
        "local --format xml            | expected one of [table, csv, json]",
        "local --baseline thrift       | 'thrift' is not a baseline: expected one of [grpc, netty, grpc-rdmarpc]",
        "server --baseline thrift      | 'thrift' is not a baseline: expected one of [grpc, netty, grpc-rdmarpc]",
        "server --grpc-listen 127.0.0.1:1 | --grpc-listen only applies to --baseline grpc",
        "server --baseline grpc --netty-listen 127.0.0.1:1 | --netty-listen only applies to --baseline netty",
        "client --baseline netty --grpc-connect 127.0.0.1:1 | --grpc-connect only applies to --baseline grpc",
        "client --netty-connect 127.0.0.1:1 | --netty-connect only applies to --baseline netty",
        "client --baseline netty --netty-connect 127.0.0.1:0 | port 0 is not a server's port",
        "local --nope                  | Unknown option: '--nope'",
        "local --device mlx5_0         | --device only applies to --transport rdma",
        "local --gid-index 3           | --gid-index only applies to --transport rdma",
        "local --rdma-completions busy-poll | --rdma-completions only applies to --transport rdma",
        "local --transport rdma --rdma-completions spin | --rdma-completions: expected one of adaptive, event, busy-poll, hybrid",
        "server --rdma-completions hybrid | --rdma-completions only applies to --transport rdma",
        "local --plot chart.svg        | --plot writes PNG",
        "local --sizes 1G              | --sizes: 1G is out of range",
        "local --sizes 2 --response-size 8 | --response-size needs requests of at least 4 bytes",
        "local --rate 0                | '0' must be at least 1 call per second",
        "local --rate fast             | 'fast' is not a rate in calls per second",
        "local --rate 2.5K             | '2.5K' is not a rate in calls per second",
        "local --rate 20M              | --rate: 20000000 is above 10000000 calls per second",
        "local --rate 1000 --pipeline 2 | --pipeline does not apply with --rate",
        "local --rate 1000 --concurrency 4,8 --plot x.png | --plot draws an open loop against the target rate and needs one --concurrency",
        "local --workload rpc          | expected one of [echo, stream]",
        "local --workload stream --rate 1000 | --rate does not apply to --workload stream",
        "local --workload stream --pipeline 2 | --pipeline does not apply to --workload stream",
        "local --workload stream --response-size 1K | --response-size does not apply to --workload stream",
        "local --workload stream --max-in-flight 1G | --max-in-flight does not apply to --workload stream",
        "local --workload stream --baseline netty | --workload stream does not apply to --baseline netty",
        "client --workload stream --baseline netty | --workload stream does not apply to --baseline netty",
        "client --workload stream --concurrency 16,2000 | --concurrency: 2000 streams is above 1024",
        "client --rate 0K             | '0K' must be at least 1 call per second",
        "client --connect nowhere      | 'nowhere' is not HOST:PORT",
        "client --connect 127.0.0.1:70000 | port 70000 is out of range",
        "client --connect 127.0.0.1:0   | port 0 is not a server's port",
        "server --max-message 0        | --max-message: 0B is out of range",
        "jmh -foo                      | JMH:",
    })
    void badOptionsGiveOneSentenceAndExitTwo(String args, String expected) {
        Run r = run(args.strip().split("\\s+"));
        assertEquals(2, r.code(), r.err());
        assertEquals("", r.out());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line: " + r.err());
        assertTrue(lines.get(0).contains(expected), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
        assertFalse(r.err().contains("\tat "), r.err());
    }

    @Test
    void rdmaWithoutADeviceFailsWithOneClearSentence() {
        // The loopback address has no RDMA device behind it here (nor on most machines).
        Run r = run("local", "--transport", "rdma", "--sizes", "128,4K", "--concurrency", "1,16", "--duration", "5s");
        assertEquals(1, r.code(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().contains("RDMA") && (r.err().contains("no RDMA device") || r.err().contains("libibverbs")),
                r.err());
        assertFalse(r.err().contains("\tat "), r.err());
    }

    @Test
    void doctorReportsWhatItCan() {
        Run r = run("doctor", "--address", "127.0.0.1");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("libibverbs.so.1: "), r.out());
        assertTrue(r.out().contains("RDMA devices"), r.out());
        assertTrue(r.out().contains("GID for 127.0.0.1"), r.out());
        assertFalse(r.out().contains("Not in this command yet"), r.out());
        assertTrue(r.out().contains("\nMissing\n"), r.out());
        if (DoctorCommand.list(DoctorCommand.SYS_INFINIBAND).isEmpty()) {
            // No device here: still exit 0, saying so in plain words, here and in the summary.
            assertTrue(r.out().contains("none: no RDMA device on this machine"), r.out());
            assertTrue(r.out().contains("  - no RDMA device was found, so only the TCP transport can run"), r.out());
            assertFalse(r.out().contains("    port 1"), r.out());
        } else {
            assertTrue(r.out().contains("    port 1\n"), r.out());
            assertTrue(r.out().contains("      MTU             active "), r.out());
        }
        if (!dev.rdmarpc.cuda.Cuda.isAvailable()) {
            assertTrue(r.out().contains("  CUDA devices: none listed, no CUDA driver was found (libcuda.so.1 does not load)"),
                    r.out());
            assertTrue(r.out().contains("  - no CUDA driver was found (libcuda.so.1 does not load)"), r.out());
        } else {
            assertTrue(r.out().contains("  CUDA devices: "), r.out());
        }
        // What the bindings say must match what the doctor prints.
        assertTrue(r.out().contains("libibverbs.so.1: " + (dev.rdmarpc.ibverbs.Ibverbs.isAvailable() ? "loads" : "NOT AVAILABLE")),
                r.out());
        assertTrue(r.out().contains("libcuda.so.1: " + (dev.rdmarpc.cuda.Cuda.isAvailable() ? "loads" : "NOT AVAILABLE")),
                r.out());
        if (dev.rdmarpc.ibverbs.Ibverbs.isAvailable()) {
            assertTrue(r.out().contains("libibverbs lists ") || r.out().contains("libibverbs cannot list devices: "), r.out());
        }
    }

    private static String lines(java.util.function.Consumer<PrintWriter> print) {
        StringWriter text = new StringWriter();
        PrintWriter out = new PrintWriter(text);
        print.accept(out);
        out.flush();
        return text.toString();
    }

    @Test
    void doctorPrintsPortAttributesAligned() {
        PortAttributes roce = new PortAttributes(1, PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_1024, 16, 0, 1L << 31, 0, 0,
                LinkLayer.ETHERNET, 1, 8, 5, 1);
        String text = lines(out -> DoctorCommand.printPort(out, roce, "veth0", "1500"));
        assertEquals(List.of(
                "      state           ACTIVE, physical LinkUp",
                "      link layer      Ethernet (RoCE)",
                "      MTU             active 1024, max 4096 (RoCE: the largest that fits veth0's MTU of 1500 bytes less headers)",
                "      speed           1X FDR10, 10 Gb/s",
                "      max message     2147483648 bytes"), text.lines().toList());

        PortAttributes ib = new PortAttributes(2, PortState.DOWN, Mtu.MTU_4096, Mtu.MTU_4096, 128, 0, 1L << 30, 7, 1,
                LinkLayer.INFINIBAND, 2, 64, 3, 128);
        text = lines(out -> DoctorCommand.printPort(out, ib, "", ""));
        assertTrue(text.contains("state           DOWN, physical Disabled - not ACTIVE, so no traffic goes through this port"), text);
        assertTrue(text.contains("link layer      InfiniBand, LID 7, subnet manager LID 1\n"), text);
        assertTrue(text.contains("MTU             active 4096, max 4096\n"), text);
        assertTrue(text.contains("speed           4X HDR, 200 Gb/s\n"), text);

        PortAttributes odd = new PortAttributes(1, PortState.ACTIVE, Mtu.MTU_1024, Mtu.MTU_1024, 1, 0, 1, 0, 0,
                LinkLayer.ETHERNET, 3, 0, 9, 1);
        assertEquals("width code 3, speed code 0", DoctorCommand.speed(odd));
        assertTrue(lines(out -> DoctorCommand.printPort(out, odd, "", "")).contains("physical code 9"));
    }

    @Test
    void doctorSaysHowGpuMemoryReachesTheNic() {
        String text = lines(out -> assertTrue(DoctorCommand.printGpu(out, 0, "NVIDIA H200", "0000:1B:00.0",
                150_000_000_000L, "9.0", true, true, false)));
        assertEquals(List.of(
                "    GPU 0: NVIDIA H200",
                "      PCI bus id      0000:1B:00.0",
                "      memory          139.7 GiB",
                "      compute         9.0",
                "      dma-buf         yes",
                "      GPUDirect RDMA  yes",
                "      to the NIC      dma-buf: exported and registered with ibv_reg_dmabuf_mr (where the NIC's driver takes dma-bufs)"),
                text.lines().toList());
        text = lines(out -> assertTrue(DoctorCommand.printGpu(out, 1, "g", "b", 1L << 30, "8.0", false, true, true)));
        assertTrue(text.contains("to the NIC      peer-memory: "), text);
        text = lines(out -> assertFalse(DoctorCommand.printGpu(out, 1, "g", "b", 1L << 30, "8.0", false, true, false)));
        assertTrue(text.contains("to the NIC      staged through pinned host memory (no dma-buf and no peer-memory module loaded)"), text);
        text = lines(out -> assertFalse(DoctorCommand.printGpu(out, 1, "g", "b", 1L << 30, "7.5", false, false, true)));
        assertTrue(text.contains("(the GPU supports neither dma-buf nor GPUDirect RDMA)"), text);
    }

    @Test
    void jmhForksGetTheProductionLaunch() {
        List<String> args = JmhCommand.forkLaunch();
        assertTrue(args.get(0).startsWith("--enable-native-access="), args.toString());
        assertTrue(args.get(0).contains("dev.rdmarpc.rpc"), args.toString());
        assertEquals("--module-path", args.get(1));
        assertEquals(List.of("--add-modules", "dev.rdmarpc.bench"), args.subList(3, 5));
    }
}
