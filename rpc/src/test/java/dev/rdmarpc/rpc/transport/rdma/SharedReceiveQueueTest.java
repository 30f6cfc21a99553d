package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.ECHO;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.SLOW_ECHO;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.assertNoNewRnr;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.echoServer;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.echoSweep;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.payloads;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.Driver;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared receive queue ({@link SharedReceiveQueueSettings}) for real, in the Soft-RoCE VM:
 * echo across sizes and concurrency, mixed pairs, many connections on one queue with receive memory
 * that does not grow with them, the RNR-free burst, and native resources back to their start.
 */
@RdmaTest
@Timeout(600)
class SharedReceiveQueueTest {

    static RdmaConfig srq() {
        return RdmaTestEnv.smallConfig().sharedReceiveQueue(s -> s.enabled(true));
    }

    private static void assertUsesSharedQueue(RdmaTransport t) {
        assertTrue(t.sharedReceiveBytes() > 0, "a shared receive queue holds the receive buffers: " + t.diagnostics());
    }

    @Test
    void echoAcrossSizesAndConcurrencyWithSharedReceiveQueuesOnBothSides() throws Exception {
        long rnrBefore = RdmaTestEnv.hwCounter("rcvd_rnr_err");
        long rnrSentBefore = RdmaTestEnv.hwCounter("send_rnr_err");
        RdmaConfig config = srq().bufferPool(p -> p.maxPooledBytes(128L << 20).maxLargeBytes(128L << 20));
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config);
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect();
             Arena arena = Arena.ofShared()) {
            int chunk = serverT.bufferPool().chunkSize();
            long rendezvous = echoSweep(client, clientT, serverT, arena,
                    new int[]{1, 200, 4096, chunk - 32, chunk - 31, 1 << 20, 3 << 20}, new int[]{1, 8, 64}, 500, 2 << 20);
            assertEquals(51, rendezvous, "echoes of 1 and 3 MiB");
            RdmaRpcTest.assertRendezvousAtTheDefaultThreshold(clientT, serverT, rendezvous);
            assertUsesSharedQueue(serverT);
            assertUsesSharedQueue(clientT);
            System.out.println("client " + clientT.metrics());
            System.out.println("server " + serverT.metrics());
            assertEquals(0, clientT.metrics().completionErrors() + serverT.metrics().completionErrors());
            assertEquals(0, clientT.metrics().receiveGrowths() + serverT.metrics().receiveGrowths(),
                    "a connection on a shared queue never grows a queue of its own");
        }
        // one connection: its 8 credits and 3 credit-only messages always fit the 64 posted receives
        assertNoNewRnr(rnrBefore, rnrSentBefore);
    }

    @Test
    void aMixedPairWorksEitherWayRound() throws Exception {
        for (boolean serverShared : new boolean[]{true, false}) {
            RdmaConfig serverConfig = serverShared ? srq() : RdmaTestEnv.smallConfig();
            RdmaConfig clientConfig = serverShared ? RdmaTestEnv.smallConfig() : srq();
            try (RdmaTransport serverT = RdmaTransport.create(serverConfig);
                 RdmaTransport clientT = RdmaTransport.create(clientConfig);
                 RpcServer server = echoServer().transport(serverT).start();
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect();
                 Arena arena = Arena.ofShared()) {
                for (int size : new int[]{1, 3000, 1 << 20}) {
                    new Driver(client, payloads(arena, size, 4)).run(ECHO, size > 4096 ? 16 : 500, 16);
                }
                assertUsesSharedQueue(serverShared ? serverT : clientT);
                assertEquals(0, (serverShared ? clientT : serverT).sharedReceiveBytes());
                // the 1 MiB echoes, at the default rendezvous threshold: read by rendezvous both ways
                assertEquals(16, serverT.metrics().rendezvousRead(), serverT.metrics().toString());
                assertEquals(16, clientT.metrics().rendezvousRead(), clientT.metrics().toString());
                assertEquals(0, clientT.metrics().completionErrors() + serverT.metrics().completionErrors());
                System.out.println((serverShared ? "server" : "client") + " with SRQ: client " + clientT.metrics()
                        + "\n  server " + serverT.metrics());
            }
        }
    }

    @Test
    void sixteenConnectionsShareOneQueueAndReceiveMemoryDoesNotGrowWithThem() throws Exception {
        RdmaConfig config = srq().bufferPool(p -> p.chunkSize(64 * 1024).slabSize(1 << 20));
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config);
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            int chunk = serverT.bufferPool().chunkSize();
            long queueBytes = (long) config.sharedReceiveQueue().depth() * chunk;
            MemorySegment[] p = payloads(arena, 100_000, 4); // two messages per frame
            List<RpcClient> clients = new ArrayList<>();
            try {
                clients.add(RpcClient.builder().address(server.address()).transport(clientT).connect());
                new Driver(clients.get(0), p).run(ECHO, 32, 8);
                long srqOne = serverT.sharedReceiveBytes();
                long inUseOne = serverT.bytesInUse();
                assertEquals(queueBytes, srqOne, "the queue holds its configured depth");
                for (int i = 1; i < 16; i++) {
                    clients.add(RpcClient.builder().address(server.address()).transport(clientT).connect());
                }
                // one connection after another, each at the full concurrency its credits allow
                for (RpcClient c : clients) {
                    new Driver(c, p).run(ECHO, 32, 8);
                }
                long srqSixteen = serverT.sharedReceiveBytes();
                long inUseSixteen = serverT.bytesInUse();
                long privateQueues = 16L * (config.receiveQueue().depth() + RdmaConfig.RESERVED_RECEIVES) * chunk;
                System.out.printf("server registered bytes in use: 1 connection %d, 16 connections %d (shared queue %d;"
                        + " private queues would hold %d)%n", inUseOne, inUseSixteen, srqSixteen, privateQueues);
                assertEquals(srqOne, srqSixteen, "receive memory is the same for 1 and 16 connections");
                assertEquals(srqSixteen, clientT.sharedReceiveBytes(), "the client side shares one queue too");
                assertTrue(inUseSixteen - inUseOne <= 15L * chunk,
                        "15 more idle connections hold no receive memory (at most a send chunk each): "
                                + (inUseSixteen - inUseOne));
                assertTrue(inUseSixteen < privateQueues, inUseSixteen + " < " + privateQueues);

                // then all sixteen at once: 16 x (8 + 3) messages may be in flight against 64 receives;
                // the queue grows (bounded, on the device's limit event) and RNR retry is the backstop,
                // so every call succeeds. Single-packet frames: with 16 QPs streaming multi-packet
                // messages at once, the VM's rxe (kernel 6.1) drops packets and its retransmissions
                // fail with REM_INV_REQ_ERR with private receive queues just the same (a control run
                // without a shared queue failed identically), so that load tests rxe, not this code.
                MemorySegment[] small = payloads(arena, 512, 4);
                long rnrBefore = RdmaTestEnv.hwCounter("rcvd_rnr_err");
                ExecutorService pool = Executors.newFixedThreadPool(16);
                try {
                    List<Future<?>> runs = new ArrayList<>();
                    for (RpcClient c : clients) {
                        runs.add(pool.submit(() -> {
                            new Driver(c, small).run(ECHO, 300, 8);
                            return null;
                        }));
                    }
                    for (Future<?> f : runs) {
                        f.get(300, TimeUnit.SECONDS);
                    }
                } finally {
                    pool.shutdownNow();
                }
                System.out.println("all at once: server " + serverT.metrics() + "\n  client " + clientT.metrics()
                        + "\n  rxe rcvd_rnr_err " + rnrBefore + " -> " + RdmaTestEnv.hwCounter("rcvd_rnr_err")
                        + ", server shared queue bytes " + serverT.sharedReceiveBytes());
                assertTrue(serverT.sharedReceiveBytes() <= (long) config.sharedReceiveQueue().maxDepth() * chunk);
                assertEquals(0, clientT.metrics().completionErrors() + serverT.metrics().completionErrors());
            } catch (AssertionError | java.util.concurrent.ExecutionException e) {
                System.out.println("client " + clientT.diagnostics());
                System.out.println("server " + serverT.diagnostics());
                throw e;
            } finally {
                for (RpcClient c : clients) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aBurstAgainstASmallSharedQueueNeverMeetsAnRnr() throws Exception {
        long rnrBefore = RdmaTestEnv.hwCounter("rcvd_rnr_err");
        long rnrSentBefore = RdmaTestEnv.hwCounter("send_rnr_err");
        // 2 credits + 3 credit-only messages per connection fit 8 receives: no RNR by design.
        // The send window (16) is far wider than the credits (2), so a held-back burst is held
        // back by credits (a stall is booked to the window only when the window is full; with both
        // at 2, both were full at once and the stall went to the window).
        RdmaConfig tiny = srq().sharedReceiveQueue(s -> s.depth(8).maxDepth(8).credits(2))
                .send(s -> s.window(16)).bufferPool(p -> p.chunkSize(4096).slabSize(1 << 20));
        try (RdmaTransport serverT = RdmaTransport.create(tiny);
             RdmaTransport clientT = RdmaTransport.create(tiny);
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).maxOutstanding(4096)
                     .connect();
             Arena arena = Arena.ofShared()) {
            new Driver(client, payloads(arena, 3000, 8)).run(ECHO, 5_000, 2048);
            new Driver(client, payloads(arena, 100, 8)).run(SLOW_ECHO, 1_000, 1024);
            new Driver(client, payloads(arena, 10_000, 8)).run(ECHO, 1_000, 512); // 3 messages per frame
            RdmaMetrics c = clientT.metrics();
            RdmaMetrics s = serverT.metrics();
            System.out.println("client " + c);
            System.out.println("server " + s);
            assertUsesSharedQueue(serverT);
            assertEquals(0, c.rnrErrors() + s.rnrErrors(), "RNR error completions");
            assertEquals(0, c.completionErrors() + s.completionErrors(), "error completions");
            assertTrue(c.creditStalls() + s.creditStalls() > 0, "the burst ran out of credits (flow control exercised)");
        }
        assertNoNewRnr(rnrBefore, rnrSentBefore);
    }

    @Test
    void nativeResourcesAreBackToTheStartAfterClose() throws Exception {
        Map<ResourceKind, Long> before = VerbsResources.snapshot();
        long srqCreated = VerbsResources.created(ResourceKind.SHARED_RECEIVE_QUEUE);
        long srqDestroyed = VerbsResources.destroyed(ResourceKind.SHARED_RECEIVE_QUEUE);
        try (RdmaTransport serverT = RdmaTransport.create(srq());
             RdmaTransport clientT = RdmaTransport.create(srq());
             RpcServer server = echoServer().transport(serverT).start()) {
            for (int round = 0; round < 2; round++) {
                List<RpcClient> clients = new ArrayList<>();
                try (Arena arena = Arena.ofShared()) {
                    for (int i = 0; i < 3; i++) {
                        clients.add(RpcClient.builder().address(server.address()).transport(clientT).connect());
                    }
                    for (RpcClient c : clients) {
                        new Driver(c, payloads(arena, 512, 4)).run(ECHO, 1_000, 16);
                    }
                } finally {
                    for (RpcClient c : clients) {
                        c.close();
                    }
                }
            }
            assertEquals(2, VerbsResources.live(ResourceKind.SHARED_RECEIVE_QUEUE) - before.getOrDefault(
                    ResourceKind.SHARED_RECEIVE_QUEUE, 0L), "one queue per transport (one I/O thread, one device)");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int chunk = serverT.bufferPool().chunkSize();
            while (server.metrics().connectionsOpened() != server.metrics().connectionsClosed()
                    || (long) serverT.bufferPool().chunksInUse() * chunk != serverT.sharedReceiveBytes()) {
                assertTrue(System.nanoTime() < deadline, "server connections not drained: " + serverT.bufferPool()
                        + ", shared queue bytes " + serverT.sharedReceiveBytes());
                Thread.sleep(5);
            }
            assertEquals(0, serverT.bufferPool().largeBuffersInUse());
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
        assertEquals(2, VerbsResources.created(ResourceKind.SHARED_RECEIVE_QUEUE) - srqCreated);
        assertEquals(2, VerbsResources.destroyed(ResourceKind.SHARED_RECEIVE_QUEUE) - srqDestroyed,
                "each queue destroyed once (the verbs layer refuses while a queue pair still uses it)");
    }

}
