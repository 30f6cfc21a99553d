package dev.rdmarpc.bench.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.load.CellResult;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.MatrixRunner;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.Workload;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The gRPC-java baseline, loaded as the CLI loads it, answering real calls on loopback. */
@Timeout(120)
class GrpcBaselineTest {
    @Test
    void loadsOutsideTheModuleGraphAndEchoes() throws Exception {
        try (EchoStack grpc = BaselineLoader.grpc()) {
            assertEquals("grpc-java", grpc.name());
            assertTrue(!grpc.getClass().getModule().isNamed(), "gRPC stays out of the module graph");
            ClassLoader loader = grpc.getClass().getClassLoader();
            assertNotEquals(EchoStack.class.getClassLoader(), loader);
            assertEquals(loader, loader.loadClass("io.grpc.ManagedChannel").getClassLoader(),
                    "gRPC itself comes from grpc-lib, through the baseline's own loader");
            StackOptions options = new StackOptions(1, 64 * 1024, null, -1);
            assertTrue(grpc.describe(options).contains("gRPC-java 1.79.0"), grpc.describe(options));
            try (EchoServer server = grpc.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options)) {
                assertNotEquals(0, server.address().getPort());
                // Echo at 4K, and a 64 KiB answer to a 16-byte request (the response-size header).
                for (int response : new int[] {-1, 64 * 1024}) {
                    // Generous times: on a loaded 2-core machine gRPC's first calls (class loading, JIT) are slow.
                    MatrixPlan plan = new MatrixPlan(List.of(response < 0 ? 4096 : 16), List.of(2), response, 1, 1,
                            Duration.ofMillis(500), Duration.ofMillis(1500), 1 << 30, Duration.ofSeconds(1), 1);
                    CellResult r = MatrixRunner.run(List.of(new MatrixRunner.Target(grpc, server.address(), options)), plan,
                            MatrixRunner.CellListener.NONE).get(0).get(0);
                    assertEquals(0, r.errors(), String.valueOf(r.firstError()));
                    assertTrue(r.calls() > 0, "calls " + r.calls());
                    assertTrue(r.p50Us() > 0);
                }
            }
        }
    }

    @Test
    void streamsMessagesOfTheAskedSizeUntilCancelled() throws Exception {
        try (EchoStack grpc = BaselineLoader.grpc()) {
            StackOptions options = new StackOptions(1, 64 * 1024, null, -1);
            try (EchoServer server = grpc.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options)) {
                // Two cells on the same connections: the first cell's cancelled streams leave the second its window.
                MatrixPlan plan = new MatrixPlan(List.of(32 * 1024), List.of(3, 3), -1, 1, 2, Duration.ofMillis(300),
                        Duration.ofMillis(700), 1 << 30, Duration.ofSeconds(1), 1, List.of(), Workload.stream);
                List<CellResult> cells = MatrixRunner.run(List.of(new MatrixRunner.Target(grpc, server.address(), options)),
                        plan, MatrixRunner.CellListener.NONE).get(0);
                for (CellResult r : cells) {
                    assertEquals(0, r.errors(), String.valueOf(r.firstError()));
                    assertTrue(r.calls() > 0, "messages " + r.calls());
                    assertEquals(2, r.connections());
                }
                assertTrue(grpc.describe(options, Workload.stream).contains("isReady()"));
            }
        }
    }
}
