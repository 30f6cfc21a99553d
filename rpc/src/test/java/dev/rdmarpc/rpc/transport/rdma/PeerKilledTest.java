package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server process is killed (SIGKILL) while calls are pending on an RDMA connection: every one
 * must fail with CONNECTION_CLOSED, promptly. The server runs in a child JVM started with this JVM's
 * java and module path.
 */
@RdmaTest
@Timeout(300)
class PeerKilledTest {

    @Test
    void pendingCallsFailPromptlyWhenThePeerProcessIsKilled() throws Exception {
        Process child = startChild();
        try {
            LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    String l;
                    while ((l = r.readLine()) != null) {
                        System.out.println("[child] " + l);
                        lines.add(l);
                    }
                } catch (Exception ignored) {
                    // the child died
                }
            });
            String port = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (port == null) {
                String l = lines.poll(1, TimeUnit.SECONDS);
                assertTrue(child.isAlive() || l != null, "child server died before listening");
                assertTrue(System.nanoTime() < deadline, "child server did not start in time");
                if (l != null && l.startsWith("PORT ")) {
                    port = l.substring(5).trim();
                }
            }
            InetSocketAddress address = new InetSocketAddress(RdmaTestEnv.serverAddress(), Integer.parseInt(port));
            try (RpcClient client = RpcClient.builder().address(address).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[]{9}, client.call(ChildServer.ECHO, new byte[]{9}));
                int pending = 20;
                List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < pending; i++) {
                    calls.add(client.callAsync(ChildServer.HANG, new byte[64]));
                }
                for (int started = 0; started < pending; ) {
                    String l = lines.poll(60, TimeUnit.SECONDS);
                    assertNotNull(l, "the server did not start every call");
                    if (l.equals("HANG")) {
                        started++;
                    }
                }
                assertEquals(pending, client.outstanding());
                long killedAt = System.nanoTime();
                child.destroyForcibly();
                for (CompletableFuture<byte[]> f : calls) {
                    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                            () -> f.get(10, TimeUnit.SECONDS));
                    RpcException re = assertInstanceOf(RpcException.class, e.getCause());
                    assertEquals(Status.CONNECTION_CLOSED, re.status(), re.getMessage());
                }
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                System.out.println("all " + pending + " pending calls failed " + ms + " ms after SIGKILL");
                assertTrue(ms < 3000, "pending calls took " + ms + " ms to fail");
                assertEquals(0, client.outstanding());
                assertTrue(!client.isOpen());
            }
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static Process startChild() throws Exception {
        ProcessBuilder pb = ChildJvm.command(List.of("-Xmx256m", "-XX:+UseSerialGC"), ChildServer.class,
                RdmaTestEnv.serverAddress());
        System.out.println("starting " + String.join(" ", pb.command()));
        return pb.start();
    }
}
