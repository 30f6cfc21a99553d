package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connection limits of an RDMA server (issue 15, point 3): counted on the TCP connection each RDMA
 * connection starts with; a peer over a limit is told why in the form it understands, a refusing
 * hello for an RDMA client, a connection-level error for a plain TCP one.
 */
@RdmaTest
@Timeout(300)
class RdmaLimitsTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);

    @Test
    void aServerThatClosesAtOnceFailsTheConnectWithUnavailableNeverARawException() throws Exception {
        int attempts = 5;
        try (ServerSocketChannel closer = ServerSocketChannel.open().bind(RdmaTestEnv.serverBind())) {
            Thread t = Thread.ofPlatform().daemon().start(() -> {
                for (int i = 0; i < attempts; i++) {
                    try {
                        closer.accept().close(); // at once: the client may still be setting up its queue pair
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            InetSocketAddress address = (InetSocketAddress) closer.getLocalAddress();
            for (int i = 0; i < attempts; i++) {
                RpcException e = assertThrows(RpcException.class,
                        () -> RpcClient.builder().address(address).rdma(RdmaTestEnv.smallConfig()).connect().close());
                assertEquals(Status.UNAVAILABLE, e.status(), e::toString);
            }
            t.join(10_000);
        }
    }

    @Test
    void oneAddressPinsAtMostItsShareOfThePool() throws Exception {
        RdmaConfig serverConfig = RdmaTestEnv.smallConfig().poolBytesPerAddress(4L << 20); // one connection's 2.75 MiB
        try (RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(serverConfig)
                .register(ECHO, (ctx, b) -> b).start()) {
            try (RpcClient first = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[] {1}, first.call(ECHO, new byte[] {1}));
                RpcException e = assertThrows(RpcException.class,
                        () -> RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect().close());
                assertEquals(Status.RESOURCE_EXHAUSTED, e.status(), e.getMessage());
                assertTrue(e.getMessage().contains("share of " + RdmaTestEnv.clientAddress())
                        && e.getMessage().contains("poolBytesPerAddress"), e.getMessage());
                assertArrayEquals(new byte[] {2}, first.call(ECHO, new byte[] {2}));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) { // its share comes back when it closes
                try (RpcClient again = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                    assertArrayEquals(new byte[] {3}, again.call(ECHO, new byte[] {3}));
                    break;
                } catch (RpcException e) {
                    assertTrue(System.nanoTime() < deadline && e.status() == Status.RESOURCE_EXHAUSTED, e::toString);
                    Thread.sleep(Duration.ofMillis(100));
                }
            }
        }
    }

    /**
     * A server grows a peer's private receive queue (when the peer runs out of credits) only within
     * the peer address's share, as its hellos were: with the share a hello's 2.75 MiB and 1.25 MiB
     * more, the 2 MiB growth step never fits, and every call still succeeds at the first 8 credits.
     */
    @Test
    void aPeersReceiveQueueGrowsOnlyWithinItsAddressShare() throws Exception {
        for (long share : new long[] {4L << 20, 1L << 40}) {
            RdmaConfig serverConfig = RdmaTestEnv.smallConfig().poolBytesPerAddress(share);
            try (RdmaTransport serverT = RdmaTransport.create(serverConfig);
                 RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig());
                 RpcServer server = RdmaRpcTest.echoServer().transport(serverT).start();
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).maxOutstanding(1024)
                         .connect();
                 java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
                // one message each (under a 256 KiB chunk), 32 in flight against 8 credits: the client
                // runs out and asks the server to grow (refused or done: either shows it asked)
                new RdmaRpcTest.Driver(client, RdmaRpcTest.payloads(arena, 200_000, 4)).run(RdmaRpcTest.ECHO, 400, 32);
                RdmaMetrics m = serverT.metrics();
                System.out.println("share " + share + ": server " + m + "\n  client " + clientT.metrics());
                assertEquals(0, m.completionErrors() + clientT.metrics().completionErrors(), "error completions");
                if (share == 4L << 20) {
                    assertEquals(0, m.receiveGrowths(), "no growth past the address's share");
                    assertTrue(m.receiveGrowthsRefused() > 0, "growth asked for and refused");
                } else {
                    assertTrue(m.receiveGrowths() > 0, "within the share the queue grows");
                    assertEquals(0, m.receiveGrowthsRefused());
                }
            }
        }
    }

    /**
     * Large frames over RDMA claim their address's share ({@code limits.maxFrameBytesPerAddress}) as
     * over TCP: with 3 MiB, one 2 MiB frame (2.25 MiB claimed) is reassembled at a time; the others
     * wait unhandled, their credits held back, and every call completes whole. The client's rendezvous
     * is off, so that the frames come as split SENDs to reassemble.
     */
    @Test
    void largeFramesOverTheirAddressShareWaitTheirTurnAndAllComplete() throws Exception {
        RdmaConfig serverConfig = RdmaTestEnv.smallConfig().limits(l -> l.maxFrameBytesPerAddress(3L << 20));
        List<RpcClient> clients = new ArrayList<>();
        try (RdmaTransport serverT = RdmaTransport.create(serverConfig);
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(0)));
             RpcServer server = RdmaRpcTest.echoServer().transport(serverT).start()) {
            for (int i = 0; i < 4; i++) {
                clients.add(RpcClient.builder().address(server.address()).transport(clientT).connect());
            }
            byte[] payload = new byte[2 << 20];
            for (int i = 0; i < payload.length; i += 997) {
                payload[i] = (byte) (i / 997);
            }
            List<Future<?>> runs = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(clients.size());
            try {
                for (RpcClient c : clients) {
                    runs.add(pool.submit(() -> {
                        for (int k = 0; k < 3; k++) {
                            assertArrayEquals(payload, c.call(ECHO, payload), "the whole echo");
                        }
                        return null;
                    }));
                }
                for (Future<?> f : runs) {
                    f.get(240, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            RdmaMetrics m = serverT.metrics();
            System.out.println("server " + m);
            assertTrue(m.frameShareWaits() > 0, "frames waited for the share");
            assertEquals(0, m.completionErrors() + clientT.metrics().completionErrors(), "error completions");
            assertEquals(0, server.metrics().connectionsClosed(), "none closed: they waited");
        } finally {
            for (RpcClient c : clients) {
                c.close();
            }
        }
    }

    @Test
    void aPeerOverTheLimitIsToldWhyOverRdmaAndOverTcp() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind())
                .rdma(RdmaTestEnv.smallConfig().limits(l -> l.maxConnectionsPerAddress(1)))
                .register(ECHO, (ctx, b) -> b).start()) {
            try (RpcClient first = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[] {1}, first.call(ECHO, new byte[] {1}));

                RpcException overRdma = assertThrows(RpcException.class,
                        () -> RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect().close());
                assertEquals(Status.RESOURCE_EXHAUSTED, overRdma.status(), overRdma.getMessage());
                assertTrue(overRdma.getMessage().contains("connection limit")
                        && overRdma.getMessage().contains("maxConnectionsPerAddress"), overRdma.getMessage());

                try (RpcClient overTcp = RpcClient.connect(server.address())) {
                    RpcException e = assertThrows(RpcException.class, () -> overTcp.call(ECHO, new byte[] {2}));
                    assertTrue(e.status() == Status.RESOURCE_EXHAUSTED || e.status() == Status.CONNECTION_CLOSED, e::toString);
                    assertTrue(e.getMessage().contains("connection limit"), e.getMessage());
                }
                assertArrayEquals(new byte[] {3}, first.call(ECHO, new byte[] {3}), "the admitted one is served meanwhile");
            }
            // Its place is free again once it closed.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try (RpcClient again = RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                    assertArrayEquals(new byte[] {4}, again.call(ECHO, new byte[] {4}));
                    break;
                } catch (RpcException e) {
                    assertTrue(System.nanoTime() < deadline && e.status() == Status.RESOURCE_EXHAUSTED, e::toString);
                    Thread.sleep(Duration.ofMillis(100));
                }
            }
        }
    }
}
