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
import dev.rdmarpc.rpc.TestCertificates;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TCP side of the RDMA transport on the host, where no RDMA device exists: a server with
 * {@code rdma()} serves plain TCP clients on its port from its own I/O threads, their sockets polled
 * beside the (here absent) completion channels, with the TCP transport's limits and TLS, and gives
 * every descriptor and buffer back. Needs libibverbs loadable (no device); the RDMA hellos on these
 * sockets run in the Soft-RoCE VM (RdmaRpcTest and the rest).
 */
@Timeout(120)
class RdmaPortTcpTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], String> THREAD = Method.of("thread", Codecs.BYTES, Codecs.STRING);

    @TempDir
    static Path dir;

    private static RpcServer.Builder server(RdmaConfig cfg) {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).rdma(cfg.threadNamePrefix("rdma-port-test"))
                .registerBlocking(ECHO, (ctx, req) -> req).registerBlocking(THREAD, (ctx, req) -> Thread.currentThread().getName());
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void plainTcpClientsAreServedOnTheRdmaLoopsWithNoThreadOfTheirOwn() throws Exception {
        try (RpcServer server = server(new RdmaConfig().loop(l -> l.ioThreads(2))).start();
             ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    try (RpcClient c = RpcClient.connect(server.address())) {
                        for (int i = 0; i < 200; i++) {
                            byte[] msg = ("client " + id + " call " + i).getBytes();
                            assertArrayEquals(msg, c.call(ECHO, msg));
                        }
                        byte[] large = new byte[1 << 20];
                        large[777_777] = (byte) id;
                        assertArrayEquals(large, c.call(ECHO, large));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            Set<String> threads = new TreeSet<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("rdma-port-test")) {
                    threads.add(t.getName());
                }
            }
            assertEquals(Set.of("rdma-port-test-0", "rdma-port-test-1"), threads,
                    "the transport's I/O threads, and no TCP thread beside them");
        }
    }

    @Test
    void aClientOverTheLimitOfItsAddressIsToldWhyAndTheOthersAreServed() throws Exception {
        try (RpcServer server = server(new RdmaConfig().limits(l -> l.maxConnectionsPerAddress(2))).start();
             RpcClient a = RpcClient.connect(server.address());
             RpcClient b = RpcClient.connect(server.address())) {
            assertArrayEquals(new byte[] {1}, a.call(ECHO, new byte[] {1}));
            assertArrayEquals(new byte[] {2}, b.call(ECHO, new byte[] {2}));
            RpcException e = assertThrows(RpcException.class, () -> {
                try (RpcClient c = RpcClient.connect(server.address())) {
                    c.call(ECHO, new byte[] {3});
                }
            });
            assertEquals(Status.RESOURCE_EXHAUSTED, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("maxConnectionsPerAddress"), e.getMessage());
            assertArrayEquals(new byte[] {4}, a.call(ECHO, new byte[] {4}));
        }
    }

    @Test
    void aTlsClientIsServedOverTlsAndAPlainOneIsRefusedWithItsReason() throws Exception {
        TestCertificates certs = new TestCertificates(dir);
        Path ca = certs.ca("test-ca");
        KeyStore key = certs.key("server", "test-ca", "ip:127.0.0.1,dns:localhost", null, 2);
        TlsConfig tls = TlsConfig.forServer(key, TestCertificates.PASSWORD.toCharArray());
        try (RpcServer server = server(new RdmaConfig().tls(tls)).start();
             RpcClient c = RpcClient.builder().address(server.address()).tcp(cfg -> cfg.tls(TlsConfig.forClient().trust(ca)))
                     .connect()) {
            byte[] large = new byte[300_000];
            large[299_999] = 9;
            assertArrayEquals(large, c.call(ECHO, large));
            RpcException e = assertThrows(RpcException.class, () -> {
                try (RpcClient plain = RpcClient.connect(server.address())) {
                    plain.call(ECHO, new byte[] {1});
                }
            });
            assertTrue(e.getMessage().contains("TLS"), e.getMessage());
        }
    }

    @Test
    void connectionsThatCameAndWentLeaveNoDescriptorOrBufferBehind() throws Exception {
        long before = openFds();
        try (RdmaTransport t = RdmaTransport.create(new RdmaConfig());
             RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).transport(t)
                     .registerBlocking(ECHO, (ctx, req) -> req).start()) {
            long serving = openFds();
            for (int i = 0; i < 20; i++) {
                try (RpcClient c = RpcClient.connect(server.address())) {
                    assertArrayEquals(new byte[100_000], c.call(ECHO, new byte[100_000]));
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((t.acceptedConnections() != 0 || t.socketPool().chunksInUse() != 0 || openFds() > serving)
                    && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertEquals(0, t.acceptedConnections());
            assertEquals(0, t.socketPool().chunksInUse());
            assertEquals(0, t.socketPool().largeBytesInUse());
            assertEquals(serving, openFds(), "each client's socket, on both ends, is closed");
        }
        assertTrue(openFds() <= before, "the listener, the eventfds and the sockets are closed: " + openFds() + " > " + before);
    }

    /** docs/rdma.md: the pings of the TCP connection beside an RDMA connection take the TCP transport's properties. */
    @Test
    void theTcpPingPropertiesReachTheRdmaSidesTcpConnections() {
        System.setProperty("rdmarpc.tcp.pingInterval", "700ms");
        System.setProperty("rdmarpc.tcp.pingTimeout", "1s");
        try (RdmaTransport t = RdmaTransport.create(new RdmaConfig())) {
            assertEquals(java.time.Duration.ofMillis(700).toNanos(), t.socketSettings().pingIntervalNanos());
            assertEquals(java.time.Duration.ofSeconds(1).toNanos(), t.socketSettings().pingTimeoutNanos());
        } finally {
            System.clearProperty("rdmarpc.tcp.pingInterval");
            System.clearProperty("rdmarpc.tcp.pingTimeout");
        }
        try (RdmaTransport t = RdmaTransport.create(new RdmaConfig())) {
            assertEquals(java.time.Duration.ofSeconds(2).toNanos(), t.socketSettings().pingIntervalNanos(), "TCP's default");
        }
    }
}
