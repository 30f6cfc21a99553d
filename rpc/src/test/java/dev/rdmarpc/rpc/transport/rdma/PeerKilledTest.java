package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
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
 * java and module path. Also killed while the client reads a rendezvous response from its memory: the
 * call fails the same way, the client's buffers come back, and its transport goes on with another server.
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

    @Test
    void aRendezvousResponseWhoseSenderIsKilledFailsTheCallAndTheClientGoesOn() throws Exception {
        try (RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig()
                .bufferPool(p -> p.maxLargeBytes(128L << 20))
                .send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD)))) {
            long inUse0;
            try (ChildServerProcess child = ChildServerProcess.start();
                 RpcClient client = RpcClient.builder().address(child.awaitAddress()).transport(clientT)
                         .maxFrameLength(64 << 20).connect()) {
                assertArrayEquals(new byte[]{9}, client.call(ChildServer.ECHO, new byte[]{9}));
                inUse0 = clientT.bytesInUse();
                long received0 = clientT.metrics().messagesReceived();
                CompletableFuture<byte[]> big = client.callAsync(ChildServer.BIG, new byte[1]);
                child.awaitLine("BIG", 1);
                // the response's descriptor arrived: the client is reading 48 MiB from the child's memory
                long deadline0 = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (clientT.metrics().messagesReceived() == received0 && System.nanoTime() < deadline0) {
                    Thread.onSpinWait();
                }
                assertEquals(received0 + 1, clientT.metrics().messagesReceived(), "the descriptor arrived");
                child.process.destroyForcibly();
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> big.get(10, TimeUnit.SECONDS));
                RpcException re = assertInstanceOf(RpcException.class, e.getCause());
                assertEquals(Status.CONNECTION_CLOSED, re.status(), re.getMessage());
                System.out.println("killed while sending 48 MiB by rendezvous: " + clientT.metrics());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (clientT.bytesInUse() > inUse0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(clientT.bytesInUse() <= inUse0, "the client holds " + clientT.bytesInUse() + " bytes, "
                    + inUse0 + " before the call: a read target was not given back");
            try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig()
                    .send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD)));
                 RpcServer server = RdmaRpcTest.echoServer().transport(serverT).start();
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect()) {
                long read0 = clientT.metrics().rendezvousRead();
                byte[] back = client.call(RdmaRpcTest.ECHO_BYTES, new byte[4 << 20]);
                assertEquals(4 << 20, back.length);
                assertEquals(1, clientT.metrics().rendezvousRead() - read0, "the next server's response was read");
            }
        }
    }
}
