package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the TCP transport (issue 18): echoes across sizes, and each way a handshake fails ending
 * with a reason that names the cause, within the handshake's time, nothing left hanging.
 * Certificates are made at run time with the JDK's keytool ({@link TestCertificates}).
 */
@Timeout(120)
class TlsTcpTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    static final Method<byte[], String> WHO = Method.of("who", Codecs.BYTES, Codecs.STRING);

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static Path ca;
    static Path otherCa;
    static KeyStore server;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = new TestCertificates(dir);
        ca = certs.ca("test-ca");
        otherCa = certs.ca("other-ca");
        server = certs.key("server", "test-ca", "ip:127.0.0.1,dns:localhost", null, 2);
        certs.key("noname", "test-ca", "dns:elsewhere.example", null, 2);
        certs.key("expired", "test-ca", "ip:127.0.0.1", "-3d", 1);
        certs.key("client-a", "test-ca", null, null, 2);
        certs.key("client-b", "test-ca", null, null, 2);
        certs.key("boom", "test-ca", null, null, 2);
        certs.key("stranger", "other-ca", null, null, 2);
    }

    private static RpcServer serve(TlsConfig tls) {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(tls))
                .maxFrameLength(16 << 20).register(ECHO, (ctx, b) -> b).start();
    }

    private static RpcClient connect(RpcServer server, TlsConfig tls) {
        return RpcClient.builder().address(server.address()).tcp(cfg -> cfg.tls(tls)).maxFrameLength(16 << 20)
                .connectTimeout(Duration.ofSeconds(5)).connect();
    }

    @Test
    void echoesEverySizeOverTls() throws Exception {
        try (RpcServer s = serve(TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()));
             RpcClient c = connect(s, TlsConfig.forClient().trust(ca))) {
            for (int size : new int[] {0, 1, 128, 16 * 1024, 32 * 1024 + 5, 100_000, 1 << 20, 8 << 20}) {
                byte[] payload = new byte[size];
                for (int i = 0; i < size; i += 251) {
                    payload[i] = (byte) (i / 251 + size);
                }
                for (int k = 0; k < 3; k++) {
                    assertArrayEquals(payload, c.call(ECHO, payload), size + " bytes");
                }
            }
        }
    }

    @Test
    void aServerConfiguredFromPemFilesServes() throws Exception {
        try (RpcServer s = serve(TlsConfig.forServer(certs.crt("server"), certs.pkcs8("server")));
             RpcClient c = connect(s, TlsConfig.forClient().trust(ca))) {
            assertArrayEquals(new byte[] {1, 2, 3}, c.call(ECHO, new byte[] {1, 2, 3}));
        }
    }

    private static String failedConnect(RpcServer s, TlsConfig client) {
        long start = System.nanoTime();
        RpcException e = assertThrows(RpcException.class, () -> connect(s, client).call(ECHO, new byte[1]));
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(10).toNanos(), "within the handshake's time");
        System.out.println("client: " + e.status() + " " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void anUntrustedIssuerIsNamed() {
        try (RpcServer s = serve(TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()))) {
            String why = failedConnect(s, TlsConfig.forClient().trust(otherCa));
            assertTrue(why.contains("not trusted"), why);
            assertArrayEquals(new byte[] {7}, connectAndEcho(s), "the server serves on");
        }
    }

    private static byte[] connectAndEcho(RpcServer s) {
        try (RpcClient c = connect(s, TlsConfig.forClient().trust(ca))) {
            return c.call(ECHO, new byte[] {7});
        }
    }

    @Test
    void aCertificateForAnotherHostIsNamed() {
        try (RpcServer s = serve(TlsConfig.forServer(certs.crt("noname"), certs.pkcs8("noname")))) {
            String why = failedConnect(s, TlsConfig.forClient().trust(ca));
            assertTrue(why.contains("does not name"), why);
        }
    }

    @Test
    void anExpiredCertificateIsNamed() {
        try (RpcServer s = serve(TlsConfig.forServer(certs.crt("expired"), certs.pkcs8("expired")))) {
            String why = failedConnect(s, TlsConfig.forClient().trust(ca));
            assertTrue(why.contains("expired"), why);
        }
    }

    @Test
    void aTlsClientAgainstAPlainServerIsToldTheServerHasNoTls() {
        try (RpcServer plain = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).register(ECHO, (ctx, b) -> b)
                .start()) {
            String why = failedConnect(plain, TlsConfig.forClient().trust(ca));
            // the server's own words, read by the client from the plain frame it answered with
            assertTrue(why.contains("answered without TLS") && why.contains("which has no TLS"), why);
            TestSupport.await("the plain server let it go", Duration.ofSeconds(5), () -> plain.metrics().connectionsActive() == 0);
        }
    }

    @Test
    void aPlainClientAgainstATlsServerIsToldTheServerRequiresTls() throws Exception {
        TcpTransport t = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)).tls(
                TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray())));
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).transport(t)
                .register(ECHO, (ctx, b) -> b).start()) {
            try (RpcClient plain = RpcClient.builder().address(s.address()).connect()) {
                RpcException e = assertThrows(RpcException.class, () -> plain.call(ECHO, new byte[1]));
                System.out.println("plain client: " + e.status() + " " + e.getMessage());
                assertEquals(Status.PROTOCOL_ERROR, e.status(), e::toString);
                assertTrue(e.getMessage().contains("requires TLS"), e.getMessage());
            }
            TestSupport.await("the server counted it", Duration.ofSeconds(5), () -> t.tlsHandshakeFailures() == 1);
            assertArrayEquals(new byte[] {7}, connectAndEcho(s), "the server serves on");
        } finally {
            t.close();
        }
    }

    @Test
    void aTlsClientOverAConnectionLimitIsToldWhyBeforeItsHandshake() {
        TlsConfig tls = TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray());
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(tls).limits(l -> l.maxConnectionsPerAddress(1)))
                .register(ECHO, (ctx, b) -> b).start();
             RpcClient first = connect(s, TlsConfig.forClient().trust(ca))) {
            assertArrayEquals(new byte[] {7}, first.call(ECHO, new byte[] {7}));
            RpcException e = assertThrows(RpcException.class, () -> connect(s, TlsConfig.forClient().trust(ca)).close());
            System.out.println("second client: " + e.status() + " " + e.getMessage());
            assertEquals(Status.RESOURCE_EXHAUSTED, e.status(), e::toString);
            assertTrue(e.getMessage().contains("maxConnectionsPerAddress"), e.getMessage());
            assertArrayEquals(new byte[] {8}, first.call(ECHO, new byte[] {8}), "the first goes on");
        }
    }

    @Test
    void tls13ByDefaultAnd12OnlyWhenBothSidesAllowIt() {
        Method<byte[], String> protocol = Method.of("protocol", Codecs.BYTES, Codecs.STRING);
        char[] pw = TestCertificates.PASSWORD.toCharArray();
        TlsConfig both = TlsConfig.forServer(server, pw).protocols("TLSv1.3", "TLSv1.2");
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(both))
                .register(protocol, (ctx, b) -> ctx.tlsSession().getProtocol()).start()) {
            try (RpcClient c = connect(s, TlsConfig.forClient().trust(ca))) {
                assertEquals("TLSv1.3", c.call(protocol, new byte[0]), "the default");
            }
            try (RpcClient c = connect(s, TlsConfig.forClient().trust(ca).protocols("TLSv1.2"))) {
                assertEquals("TLSv1.2", c.call(protocol, new byte[0]), "1.2 where both allow it");
            }
        }
        try (RpcServer s = serve(TlsConfig.forServer(server, pw))) { // 1.3 only
            String why = failedConnect(s, TlsConfig.forClient().trust(ca).protocols("TLSv1.2"));
            assertTrue(why.contains("no protocol version both sides allow"), why);
        }
    }

    /** A server that lets in only client-a, by the subject of its verified certificate. */
    private static RpcServer serveChecked(java.util.concurrent.atomic.AtomicInteger handled) {
        TlsConfig tls = TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()).trust(ca)
                .clientAuth(TlsConfig.ClientAuth.REQUIRE)
                .checkClients((session, client) -> {
                    String who = session.getPeerPrincipal().getName(); // verified: ClientAuth.REQUIRE
                    if (who.equals("CN=boom")) {
                        throw new IllegalStateException("a broken check");
                    }
                    return who.equals("CN=client-a") ? java.util.Optional.empty()
                            : java.util.Optional.of(who + " is not on this server's list");
                });
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(tls))
                .register(WHO, (ctx, b) -> {
                    handled.incrementAndGet();
                    return String.valueOf(ctx.peerPrincipal());
                }).start();
    }

    @Test
    void theServersCheckAcceptsAListedClientAndRefusesAnotherWithItsReason() throws Exception {
        java.util.concurrent.atomic.AtomicInteger handled = new java.util.concurrent.atomic.AtomicInteger();
        try (RpcServer s = serveChecked(handled)) {
            try (RpcClient a = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("client-a"), certs.pkcs8("client-a")))) {
                assertEquals("CN=client-a", a.call(WHO, new byte[0]));
            }
            assertEquals(1, handled.get());
            try (RpcClient b = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("client-b"), certs.pkcs8("client-b")))) {
                RpcException e = assertThrows(RpcException.class, () -> b.call(WHO, new byte[0]));
                System.out.println("refused client: " + e.status() + " " + e.getMessage());
                assertEquals(Status.PERMISSION_DENIED, e.status(), e::toString);
                assertTrue(e.getMessage().contains("CN=client-b is not on this server's list"), e.getMessage());
                RpcException again = assertThrows(RpcException.class, () -> b.call(WHO, new byte[0]));
                assertTrue(again.getMessage().contains("not on this server's list"), "later calls say why too: " + again);
            }
            try (RpcClient boom = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("boom"), certs.pkcs8("boom")))) {
                RpcException e = assertThrows(RpcException.class, () -> boom.call(WHO, new byte[0]));
                assertEquals(Status.PERMISSION_DENIED, e.status(), e::toString);
                assertTrue(e.getMessage().contains("check of its clients failed"), e.getMessage());
            }
            assertEquals(1, handled.get(), "no frame of a refused client reached a handler");
            try (RpcClient a = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("client-a"), certs.pkcs8("client-a")))) {
                assertEquals("CN=client-a", a.call(WHO, new byte[0]), "the server serves on");
            }
        }
    }

    private static RpcServer serveMutual() {
        TlsConfig tls = TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()).trust(ca)
                .clientAuth(TlsConfig.ClientAuth.REQUIRE);
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(tls))
                .register(WHO, (ctx, b) -> String.valueOf(ctx.peerPrincipal()))
                .registerBlocking(Method.of("whoBlocking", Codecs.BYTES, Codecs.STRING), (ctx, b) -> String.valueOf(ctx.peerPrincipal()))
                .start();
    }

    @Test
    void mutualTlsGivesHandlersTheClientsVerifiedIdentity() throws Exception {
        try (RpcServer s = serveMutual();
             RpcClient c = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("client-a"), certs.pkcs8("client-a")))) {
            assertEquals("CN=client-a", c.call(WHO, new byte[0]), "inline handler");
            assertEquals("CN=client-a", c.call(Method.of("whoBlocking", Codecs.BYTES, Codecs.STRING), new byte[0]),
                    "blocking handler");
        }
    }

    @Test
    void mutualTlsRefusesAClientWithoutACertificateOrWithAnUntrustedOne() {
        try (RpcServer s = serveMutual()) {
            String why = failedConnect(s, TlsConfig.forClient().trust(ca));
            assertTrue(why.contains("requires a client certificate"), why);
            // its certificate's issuer is not one the server names, so the client shows none
            why = failedConnect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("stranger"), certs.pkcs8("stranger")));
            assertTrue(why.contains("requires a client certificate"), why);
        }
    }

    /**
     * The same refusal as each side's engine words it (the JDK's messages, as logged in the test
     * above): the server's log and the client's error each name it from their own side.
     */
    @Test
    void aRequiredCertificateIsNamedFromEachSide() {
        String server = TlsConfig.describe(new javax.net.ssl.SSLHandshakeException("(certificate_required) Empty client certificate chain"));
        assertTrue(server.startsWith("the client showed no certificate, and this server requires one"), server);
        String client = TlsConfig.describe(new javax.net.ssl.SSLException("(certificate_required) Received fatal alert: certificate_required"));
        assertTrue(client.startsWith("the server requires a client certificate from an issuer it trusts"), client);
    }

    @Test
    void withoutTlsAHandlerSeesNoSessionAndNoPrincipal() {
        try (RpcServer plain = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .register(WHO, (ctx, b) -> ctx.tlsSession() + " " + ctx.peerPrincipal()).start();
             RpcClient c = RpcClient.connect(plain.address())) {
            assertEquals("null null", c.call(WHO, new byte[0]));
        }
    }

    @Test
    void aPeerThatSaysNothingIsClosedAfterTheHandshakeTimeout() throws Exception {
        TcpTransport t = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)).tls(
                TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()).handshakeTimeout(Duration.ofMillis(500))));
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).transport(t)
                .register(ECHO, (ctx, b) -> b).start();
             java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(s.address())) {
            ch.socket().setSoTimeout(5000);
            long start = System.nanoTime();
            assertEquals(-1, ch.socket().getInputStream().read(), "closed by the server");
            long ms = (System.nanoTime() - start) / 1_000_000;
            System.out.println("a silent peer was closed after " + ms + " ms (handshakeTimeout 500 ms)");
            assertTrue(ms >= 400 && ms < 3000, ms + " ms");
            TestSupport.await("counted", Duration.ofSeconds(5), () -> t.tlsHandshakeFailures() == 1);
            assertArrayEquals(new byte[] {7}, connectAndEcho(s), "the server serves on");
        } finally {
            t.close();
        }
    }

    @Test
    void aBadKeyFileIsNamedWhenTheConfigurationIsMade() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TlsConfig.forServer(certs.crt("server"), certs.crt("server")));
        assertTrue(e.getMessage().contains("server.crt") && e.getMessage().contains("PKCS#8"), e.getMessage());
    }
}
