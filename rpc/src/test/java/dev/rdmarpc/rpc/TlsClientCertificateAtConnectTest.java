package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TLS 1.3 server judges its client's certificate after the client's handshake is done: the
 * client's connect waits for that verdict ({@code TlsConfig.certificateVerdictWait}), so a refused
 * certificate, or none where one is required, fails the connect itself with UNAUTHENTICATED. Without
 * the wait, the first call fails with UNAUTHENTICATED and the same reason.
 */
@Timeout(60)
class TlsClientCertificateAtConnectTest {
    static final Method<byte[], String> WHO = Method.of("who", Codecs.BYTES, Codecs.STRING);

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static Path ca;
    static KeyStore server;
    static KeyStore stranger;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = new TestCertificates(dir);
        ca = certs.ca("test-ca");
        certs.ca("other-ca");
        server = certs.key("server", "test-ca", "ip:127.0.0.1,dns:localhost", null, 2);
        certs.key("client-a", "test-ca", null, null, 2);
        stranger = certs.key("stranger", "other-ca", null, null, 2);
    }

    private static RpcServer serveMutual() {
        TlsConfig tls = TlsConfig.forServer(server, TestCertificates.PASSWORD.toCharArray()).trust(ca)
                .clientAuth(TlsConfig.ClientAuth.REQUIRE);
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(tls))
                .register(WHO, (ctx, b) -> String.valueOf(ctx.peerPrincipal())).start();
    }

    private static RpcClient connect(RpcServer s, TlsConfig tls) {
        return RpcClient.builder().address(s.address()).tcp(cfg -> cfg.tls(tls)).connectTimeout(Duration.ofSeconds(5)).connect();
    }

    private static RpcException failedConnect(RpcServer s, TlsConfig tls) {
        RpcException e = assertThrows(RpcException.class, () -> connect(s, tls).close(), "connect() itself fails");
        System.out.println("client: " + e.status() + " " + e.getMessage());
        return e;
    }

    /** The stranger's key, shown whatever issuers the server names (the JDK's own key manager would show none). */
    private static TlsConfig strangerShowingItsCertificate() throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX");
        kmf.init(stranger, TestCertificates.PASSWORD.toCharArray());
        X509ExtendedKeyManager keys = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
        X509ExtendedKeyManager always = new X509ExtendedKeyManager() {
            @Override
            public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
                return keys.chooseEngineClientAlias(keyType, null, engine);
            }

            @Override
            public String[] getClientAliases(String keyType, Principal[] issuers) {
                return keys.getClientAliases(keyType, null);
            }

            @Override
            public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
                return keys.chooseClientAlias(keyType, null, socket);
            }

            @Override
            public String[] getServerAliases(String keyType, Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
                return null;
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return keys.getCertificateChain(alias);
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return keys.getPrivateKey(alias);
            }
        };
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(ca)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new javax.net.ssl.KeyManager[] {always}, tmf.getTrustManagers(), null);
        return TlsConfig.forClient().sslContext(context);
    }

    @Test
    void aClientCertificateFromAnUntrustedIssuerFailsTheConnect() throws Exception {
        try (RpcServer s = serveMutual()) {
            RpcException e = failedConnect(s, strangerShowingItsCertificate());
            assertEquals(Status.UNAUTHENTICATED, e.status(), e::toString);
            assertTrue(e.getMessage().contains("the server refused this client's certificate: it does not trust it"), e.getMessage());
            try (RpcClient a = connect(s, TlsConfig.forClient().trust(ca).keys(certs.crt("client-a"), certs.pkcs8("client-a")))) {
                assertEquals("CN=client-a", a.call(WHO, new byte[0]), "a trusted client still connects; the server serves on");
            }
        }
    }

    @Test
    void aClientWithoutACertificateFailsTheConnectWhereOneIsRequired() {
        try (RpcServer s = serveMutual()) {
            RpcException e = failedConnect(s, TlsConfig.forClient().trust(ca));
            assertEquals(Status.UNAUTHENTICATED, e.status(), e::toString);
            assertTrue(e.getMessage().contains("the server refused this client's certificate: it requires a client certificate"),
                    e.getMessage());
        }
    }

    @Test
    void aTrustedClientConnectsWithinARoundTripNotTheWholeWait() {
        try (RpcServer s = serveMutual()) {
            TlsConfig tls = TlsConfig.forClient().trust(ca).keys(certs.crt("client-a"), certs.pkcs8("client-a"))
                    .certificateVerdictWait(Duration.ofSeconds(20));
            long start = System.nanoTime();
            try (RpcClient a = connect(s, tls)) {
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 4_000, "the server's session ticket ended the wait, not its bound: " + ms + " ms");
                assertEquals("CN=client-a", a.call(WHO, new byte[0]));
            }
        }
    }

    @Test
    void withoutTheWaitTheRefusalComesAtTheFirstCall() {
        try (RpcServer s = serveMutual();
             RpcClient c = connect(s, TlsConfig.forClient().trust(ca).certificateVerdictWait(Duration.ZERO))) {
            RpcException e = assertThrows(RpcException.class, () -> c.call(WHO, new byte[0]));
            assertTrue(e.getMessage().contains("requires a client certificate"), e.getMessage());
            assertEquals(Status.UNAUTHENTICATED, e.status(), "as a refusal within the wait: " + e);
        }
    }

    @Test
    void withoutTheWaitAnUntrustedCertificateIsUnauthenticatedAtEveryCall() throws Exception {
        try (RpcServer s = serveMutual();
             RpcClient c = connect(s, strangerShowingItsCertificate().certificateVerdictWait(Duration.ZERO))) {
            for (int i = 0; i < 2; i++) { // the call the alert fails, and one on the connection it closed
                RpcException e = assertThrows(RpcException.class, () -> c.call(WHO, new byte[0]));
                System.out.println("client: " + e.status() + " " + e.getMessage());
                assertEquals(Status.UNAUTHENTICATED, e.status(), e::toString);
                assertTrue(e.getMessage().contains("the server refused this client's certificate: it does not trust it"),
                        e.getMessage());
            }
        }
    }

    @Test
    void aNegativeWaitIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> TlsConfig.forClient().certificateVerdictWait(Duration.ofMillis(-1)));
    }
}
