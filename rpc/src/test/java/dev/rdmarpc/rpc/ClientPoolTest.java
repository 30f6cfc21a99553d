package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link RpcClientPool} over TCP; {@code RdmaClientPoolTest} runs the same tests over RDMA in the VM. */
@Timeout(30)
class ClientPoolTest {
    static final Method<String, String> PEER = Method.of("peer", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> HOLD = Method.of("hold", Codecs.STRING, Codecs.STRING);

    /** @return where test servers listen */
    InetSocketAddress bindAddress() {
        return new InetSocketAddress("127.0.0.1", 0);
    }

    /** @return the server's builder on the transport under test */
    RpcServer.Builder serverBuilder() {
        return RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1)));
    }

    /** @return the pool's builder on the transport under test */
    RpcClientPool.Builder poolBuilder() {
        return RpcClientPool.builder();
    }

    /**
     * @return the pool's reconnect backoff in the reconnection test: the second failed call must come
     *         within it, so it must outlast one failed connection attempt on the transport under test
     */
    Duration reconnectBackoff() {
        return Duration.ofMillis(50);
    }

    /** @return how long a test waits for a connection to open or close */
    Duration patience() {
        return Duration.ofSeconds(5);
    }

    private RpcServer server(InetSocketAddress bind, CountDownLatch gate) {
        return serverBuilder().bind(bind)
                .register(PEER, (ctx, s) -> ctx.peer().toString())
                .registerBlocking(HOLD, (ctx, s) -> {
                    gate.await();
                    return s;
                })
                .start();
    }

    @Test
    void multiplexesWithinTheConnectionLimit() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        try (RpcServer server = server(bindAddress(), gate);
             RpcClientPool pool = poolBuilder().maxConnectionsPerEndpoint(3).maxOutstanding(4).build()) {
            InetSocketAddress ep = server.address();
            // Sequential calls reuse one connection.
            Set<String> peers = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                peers.add(pool.channel(ep).call(PEER, "x"));
            }
            assertEquals(1, peers.size());
            assertEquals(1, pool.connections(ep));
            // Load spreads over more connections, never more than the limit.
            List<CompletableFuture<String>> held = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                held.add(pool.channel(ep).callAsync(HOLD, "h" + i));
            }
            // callAsync never waits for a connection to open: the calls start as they open
            TestSupport.await("3 connections", patience(), () -> pool.connections(ep) == 3);
            TestSupport.await("12 calls held", patience(),
                    () -> server.metrics().connectionsActive() == 3 && pool.metrics().inFlight() == 12);
            assertEquals(3, pool.connections(ep));
            TestSupport.await("server sees 3 connections", patience(), () -> server.metrics().connectionsActive() == 3);
            // Exhausted: 3 connections x 4 outstanding.
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> pool.channel(ep).callAsync(PEER, "over").get(2, TimeUnit.SECONDS));
            assertEquals(Status.OVERLOADED, ((RpcException) e.getCause()).status());
            RpcException blocking = assertThrows(RpcException.class,
                    () -> pool.channel(ep).call(PEER, "over", CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100))));
            assertEquals(Status.OVERLOADED, blocking.status());
            gate.countDown();
            for (int i = 0; i < 12; i++) {
                assertEquals("h" + i, held.get(i).get(5, TimeUnit.SECONDS));
            }
            assertTrue(pool.metrics().rejected() >= 2);
            assertEquals(3, pool.connections(ep));
        }
    }

    @Test
    void reconnectsAfterTheServerComesBack() throws Exception {
        CountDownLatch gate = new CountDownLatch(0);
        RpcServer first = server(bindAddress(), gate);
        InetSocketAddress ep = first.address();
        try (RpcClientPool pool = poolBuilder().reconnectBackoff(reconnectBackoff()).build()) {
            assertNotNull(pool.channel(ep).call(PEER, "a"));
            first.close();
            TestSupport.await("pool notices the close", patience(), () -> pool.connections(ep) == 0);
            RpcException down = assertThrows(RpcException.class, () -> pool.channel(ep).call(PEER, "b"));
            assertEquals(Status.UNAVAILABLE, down.status());
            // Within the backoff window: fails fast without a new attempt.
            RpcException fast = assertThrows(RpcException.class, () -> pool.channel(ep).call(PEER, "c"));
            assertEquals(Status.UNAVAILABLE, fast.status());
            assertTrue(fast.getMessage().contains("retrying after"), fast.getMessage());
            try (RpcServer second = server(ep, gate)) {
                TestSupport.await("reconnected", patience(), () -> {
                    try {
                        return pool.channel(ep).call(PEER, "d") != null;
                    } catch (RpcException e) {
                        return false;
                    }
                });
                assertEquals(1, pool.connections(ep));
            }
        }
    }

    @Test
    void closesIdleConnections() {
        CountDownLatch gate = new CountDownLatch(0);
        try (RpcServer server = server(bindAddress(), gate);
             RpcClientPool pool = poolBuilder().idleTimeout(Duration.ofMillis(300)).build()) {
            // the timeout only has to outlast the step from the call's return to the count below
            pool.channel(server.address()).call(PEER, "x");
            assertEquals(1, pool.connections(server.address()));
            TestSupport.await("idle close", patience(), () -> pool.connections(server.address()) == 0);
            TestSupport.await("server sees the close", patience(), () -> server.metrics().connectionsActive() == 0);
            // And the next call simply opens a new one.
            assertNotNull(pool.channel(server.address()).call(PEER, "y"));
            assertEquals(1, pool.connections(server.address()));
        }
    }

    /**
     * A connection handed to a call is not idle while the call is still starting: here an interceptor
     * holds the call between the pool's pick and its start for many idle timeouts. The reaper used to
     * close the connection under it (the call then went to a second one, or failed when that was
     * closed too).
     */
    @Test
    void aConnectionIsNotIdleWhileACallIsStartingOnIt() {
        CountDownLatch gate = new CountDownLatch(0);
        Duration idle = Duration.ofMillis(20);
        ClientInterceptor slowStart = (method, metadata) -> {
            try {
                Thread.sleep(idle.multipliedBy(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return metadata;
        };
        try (RpcServer server = server(bindAddress(), gate);
             RpcClientPool pool = poolBuilder().idleTimeout(idle).intercept(slowStart).build()) {
            assertNotNull(pool.channel(server.address()).call(PEER, "x"));
            assertEquals(0, pool.metrics().errors());
            assertEquals(1, pool.metrics().connectionsOpened(), "the connection was closed under the call");
            TestSupport.await("idle close", patience(), () -> pool.connections(server.address()) == 0);
        }
    }

    @Test
    void manyThreadsShareThePool() throws Exception {
        CountDownLatch gate = new CountDownLatch(0);
        try (RpcServer server = server(bindAddress(), gate);
             RpcClientPool pool = poolBuilder().maxConnectionsPerEndpoint(2).maxOutstanding(8).build()) {
            Set<String> peers = ConcurrentHashMap.newKeySet();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 32; t++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    for (int i = 0; i < 50; i++) {
                        peers.add(pool.channel(server.address()).call(PEER, "v"));
                    }
                }));
            }
            for (Thread t : threads) {
                t.join(patience().toMillis() * 2);
            }
            assertTrue(peers.size() <= 2);
            assertEquals(32 * 50, pool.metrics().calls());
            assertEquals(0, pool.metrics().errors());
        }
    }
}
