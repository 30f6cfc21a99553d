package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A port goes down under a call (issue 15, point 5): the RDMA transport hears the device's async
 * event ({@code IBV_EVENT_PORT_ERR}) and closes the connections on that port at once, so the call
 * fails with {@code CONNECTION_CLOSED} and the reason, not at its deadline. Only in the Soft-RoCE VM:
 * it builds a veth pair of its own (veth2/veth3, 198.18.1.0/24, rxe2/rxe3), takes the client's end
 * down mid-call, and removes it all afterwards; the VM's rxe0/rxe1 are never touched.
 */
@RdmaTest
@Timeout(300)
class PortDownTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], byte[]> HANG = Method.of("hang", Codecs.BYTES, Codecs.BYTES);
    static final String CLIENT = "198.18.1.1";
    static final String SERVER = "198.18.1.2";

    private static void run(String stdin, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (stdin != null) {
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
        assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
    }

    private static void runQuietly(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(60, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
            System.out.println("cleanup: " + String.join(" ", command) + ": " + e);
        }
    }

    private static void awaitActive(String device) throws Exception {
        Path state = Path.of("/sys/class/infiniband", device, "ports/1/state");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(Files.exists(state) && Files.readString(state).contains("ACTIVE"))) {
            assertTrue(System.nanoTime() < deadline, device + " port 1 did not become ACTIVE");
            Thread.sleep(100);
        }
    }

    @Test
    void callsOnAPortThatGoesDownFailAtOnceWithTheReason() throws Exception {
        assumeTrue("1".equals(System.getenv("RDMARPC_IN_VM")), "it changes the network: only in the Soft-RoCE VM");
        // As scripts/softroce-vm sets up veth0/veth1: traffic between the two local addresses goes
        // over the veth wire (table 100, consulted before local), fixed MACs, permanent neighbours.
        run(String.join("\n", List.of(
                "link add veth2 address 02:00:c6:12:01:01 type veth peer name veth3 address 02:00:c6:12:01:02",
                "addr add " + CLIENT + "/24 dev veth2",
                "addr add " + SERVER + "/24 dev veth3",
                "link set veth2 up",
                "link set veth3 up",
                "neigh replace " + SERVER + " lladdr 02:00:c6:12:01:02 dev veth2 nud permanent",
                "neigh replace " + CLIENT + " lladdr 02:00:c6:12:01:01 dev veth3 nud permanent",
                "rule add pref 12 iif veth2 lookup local",
                "rule add pref 13 iif veth3 lookup local",
                "route add " + SERVER + "/32 dev veth2 src " + CLIENT + " table 100",
                "route add " + CLIENT + "/32 dev veth3 src " + SERVER + " table 100")) + "\n", "ip", "-batch", "-");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        try {
            run("link add rxe2 type rxe netdev veth2\nlink add rxe3 type rxe netdev veth3\n", "rdma", "-b", "-");
            awaitActive("rxe2");
            awaitActive("rxe3");
            try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress(SERVER, 0)).rdma(RdmaTestEnv.smallConfig())
                    .register(ECHO, (ctx, b) -> b)
                    .registerBlocking(HANG, (ctx, b) -> {
                        started.countDown();
                        release.await(60, TimeUnit.SECONDS);
                        return b;
                    }).start();
                 RpcClient client = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[] {7}, client.call(ECHO, new byte[] {7}));
                CompletableFuture<byte[]> call = client.callAsync(HANG, new byte[64],
                        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(90)));
                assertTrue(started.await(60, TimeUnit.SECONDS), "the server took the call");
                long downAt = System.nanoTime();
                run(null, "ip", "link", "set", "veth2", "down");
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downAt);
                RpcException rpc = assertInstanceOf(RpcException.class, e.getCause());
                System.out.println("the call failed " + ms + " ms after the link went down: " + rpc.getMessage());
                assertEquals(Status.CONNECTION_CLOSED, rpc.status(), rpc.getMessage());
                assertTrue(rpc.getMessage().contains("RDMA port 1 of rxe2 went down") && rpc.getMessage().contains("PORT_ERR"),
                        rpc.getMessage());
                // Without the event it would wait for TCP keepalive on the liveness connection (25 s) or
                // the call's 90 s deadline; the time includes starting `ip` under emulation (seconds).
                assertTrue(ms < 15_000, "failed " + ms + " ms after the link went down");
                assertTrue(!client.isOpen());
                release.countDown();
            }
        } finally {
            release.countDown();
            runQuietly("rdma", "link", "delete", "rxe2");
            runQuietly("rdma", "link", "delete", "rxe3");
            runQuietly("ip", "link", "del", "veth2");
            runQuietly("ip", "rule", "del", "pref", "12");
            runQuietly("ip", "rule", "del", "pref", "13");
        }
    }
}
