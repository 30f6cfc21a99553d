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
