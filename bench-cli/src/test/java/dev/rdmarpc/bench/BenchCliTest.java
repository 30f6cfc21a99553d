package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.stack.Transport;
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
        assertEquals(List.of(1, 4, 16, 64, 256), c.matrix.concurrency);
        assertEquals(Duration.ofSeconds(1), c.matrix.warmup);
        assertEquals(Duration.ofSeconds(2), c.matrix.duration);
        assertEquals(4, c.matrix.connections);
        assertEquals(1, c.matrix.pipeline);
        assertEquals(64L << 20, c.matrix.maxInFlight);
        assertEquals(Duration.ofSeconds(3), c.matrix.initialWarmup());
        assertEquals(Duration.ofSeconds(15), parseLocal("local", "--baseline", "grpc").matrix.initialWarmup(),
                "gRPC-java needs a longer JIT warm-up");
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
        assertEquals(List.of(1, 16), c.matrix.concurrency);
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
        "local --baseline thrift       | expected one of [grpc]",
        "local --nope                  | Unknown option: '--nope'",
        "local --device mlx5_0         | --device only applies to --transport rdma",
        "local --gid-index 3           | --gid-index only applies to --transport rdma",
        "local --plot chart.svg        | --plot writes PNG",
        "local --sizes 1G              | --sizes: 1G is out of range",
        "local --sizes 2 --response-size 8 | --response-size needs requests of at least 4 bytes",
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
        assertTrue(r.out().contains("Not in this command yet"), r.out());
        // What the bindings say must match what the doctor prints.
        assertTrue(r.out().contains("libibverbs.so.1: " + (dev.rdmarpc.ibverbs.Ibverbs.isAvailable() ? "loads" : "NOT AVAILABLE")),
                r.out());
        assertTrue(r.out().contains("libcuda.so.1: " + (dev.rdmarpc.cuda.Cuda.isAvailable() ? "loads" : "NOT AVAILABLE")),
                r.out());
        if (dev.rdmarpc.ibverbs.Ibverbs.isAvailable()) {
            assertTrue(r.out().contains("libibverbs lists ") || r.out().contains("libibverbs cannot list devices: "), r.out());
        }
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
