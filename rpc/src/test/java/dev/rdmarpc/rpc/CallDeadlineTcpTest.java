package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call's deadline covers its pool's connect (issue 43, point 1): call, callAsync and openStream
 * with 100 ms deadlines end with DEADLINE_EXCEEDED within 100 ms + 50 ms while the connection they
 * need is being opened, whatever the connect timeout (5 s), and callAsync returns at once. Over TLS
 * with the handshake held by a proxy, and on plain TCP against a listener whose accept backlog is full.
 */
@Timeout(60)
class CallDeadlineTcpTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Duration DEADLINE = Duration.ofMillis(100);
    static final long SLACK_MS = 50;

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static Path ca;
    static KeyStore serverKey;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = new TestCertificates(dir);
        ca = certs.ca("test-ca");
        serverKey = certs.key("server", "test-ca", "ip:127.0.0.1,dns:localhost", null, 2);
    }

    /** Every kind of call against {@code pool}'s channel to {@code ep}, which is still connecting, ends at its deadline. */
    static void everyCallEndsAtItsDeadline(RpcClientPool pool, InetSocketAddress ep) throws Exception {
        everyCallEndsAtItsDeadline(pool, ep, true);
    }

    /** @param timed false: check the statuses only (a round that loads the classes under emulation) */
    static void everyCallEndsAtItsDeadline(RpcClientPool pool, InetSocketAddress ep, boolean timed) throws Exception {
        RpcChannel ch = pool.channel(ep);
        CallOptions opts = CallOptions.DEFAULT.withTimeout(DEADLINE);

        long t0 = System.nanoTime();
        RpcException blocking = assertThrows(RpcException.class, () -> ch.call(ECHO, "a", opts));
        assertEnded("call", t0, blocking, timed);

        t0 = System.nanoTime();
        CompletableFuture<String> f = ch.callAsync(ECHO, "b", opts);
        long returnedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(!timed || returnedMs < SLACK_MS, "callAsync blocked its caller " + returnedMs + " ms");
        ExecutionException async = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertEnded("callAsync", t0, (RpcException) async.getCause(), timed);

        t0 = System.nanoTime();
        RpcException stream = assertThrows(RpcException.class, () -> ch.openStream(ECHO, opts));
        assertEnded("openStream", t0, stream, timed);
    }

    private static void assertEnded(String what, long t0, RpcException e, boolean timed) {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), what + ": " + e.getMessage());
        if (!timed) {
            return;
        }
        assertTrue(ms >= DEADLINE.toMillis() - 1, what + " ended early, after " + ms + " ms");
        assertTrue(ms <= DEADLINE.toMillis() + SLACK_MS, what + " ended after " + ms + " ms");
    }

    @Test
    void callsEndAtTheirDeadlineWhileTheTlsHandshakeIsHeld() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(TlsConfig.forServer(serverKey, TestCertificates.PASSWORD.toCharArray())))
                .register(ECHO, (ctx, s) -> s).start();
             HoldingProxy proxy = new HoldingProxy(server.address(), Duration.ofMillis(1500));
             RpcClientPool pool = RpcClientPool.builder().tcp(cfg -> cfg.tls(TlsConfig.forClient().trust(ca)))
                     .connectTimeout(Duration.ofSeconds(5)).build()) {
            InetSocketAddress ep = proxy.address();
            everyCallEndsAtItsDeadline(pool, ep);
            // the connection goes on opening: a call with time enough gets through it
            assertEquals("late", pool.channel(ep).call(ECHO, "late", Duration.ofSeconds(10)));
            assertEquals(1, pool.connections(ep));
        }
    }

    @Test
    void callsEndAtTheirDeadlineWhenTheAcceptBacklogIsFull() throws Exception {
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress ep = new InetSocketAddress(InetAddress.getLoopbackAddress(), full.getLocalPort());
            List<Socket> queued = fillBacklog(ep);
            try (RpcClientPool pool = RpcClientPool.builder().connectTimeout(Duration.ofSeconds(5)).build()) {
                everyCallEndsAtItsDeadline(pool, ep);
            } finally {
                for (Socket s : queued) {
                    s.close();
                }
            }
        }
    }

    /** Connects to {@code ep} (never accepting) until a connect times out: its backlog is full. */
    private static List<Socket> fillBacklog(InetSocketAddress ep) throws Exception {
        List<Socket> queued = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            Socket s = new Socket();
            try {
                s.connect(ep, 200);
                queued.add(s);
            } catch (SocketTimeoutException e) {
                s.close();
                return queued;
            }
        }
        fail("the backlog of a listener that never accepts did not fill after 64 connections");
        return queued;
    }
}
