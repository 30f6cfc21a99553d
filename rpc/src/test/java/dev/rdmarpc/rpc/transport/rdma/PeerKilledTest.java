package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
        try (ChildServerProcess child = ChildServerProcess.start()) {
            InetSocketAddress address = child.awaitAddress();
            try (RpcClient client = RpcClient.builder().address(address).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[]{9}, client.call(ChildServer.ECHO, new byte[]{9}));
                int pending = 20;
                List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < pending; i++) {
                    calls.add(client.callAsync(ChildServer.HANG, new byte[64]));
                }
                child.awaitLine("HANG", pending);
                assertEquals(pending, client.outstanding());
                long killedAt = System.nanoTime();
                child.process.destroyForcibly();
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
        }
    }
}
