package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS set up from files the JDK's keytool writes (issue 43, point 8): a server's PKCS#12 key store
 * and a client's PKCS#12 trust store, given as paths and passwords; a wrong password is a clear error;
 * a client whose certificate comes from an issuer the server does not trust is told so.
 */
@Timeout(120)
class TlsKeyStoreFileTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);

    @TempDir
    Path dir;

    @Test
    void keyAndTrustStoresFromFiles() throws Exception {
        TestCertificates certs = new TestCertificates(dir);
        Path caPem = certs.ca("test-ca");
        certs.key("server", "test-ca", "ip:127.0.0.1", null, 2);
        certs.key("client", "test-ca", null, null, 2);
        certs.ca("other-ca");
        certs.key("stranger", "other-ca", null, null, 2);
        char[] pw = TestCertificates.PASSWORD.toCharArray();
        // a trust store as keytool -importcert writes it
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(caPem)) {
            trust.setCertificateEntry("test-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        Path trustFile = dir.resolve("trust.p12");
        try (OutputStream out = Files.newOutputStream(trustFile)) {
            trust.store(out, pw);
        }
        TlsConfig serverTls = TlsConfig.forServer(dir.resolve("server.p12"), pw).trust(trustFile, pw)
                .clientAuth(TlsConfig.ClientAuth.REQUIRE);
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.tls(serverTls)).register(ECHO, (ctx, s) -> s).start()) {
            try (RpcClient client = RpcClient.builder().address(server.address())
                    .tcp(cfg -> cfg.tls(TlsConfig.forClient().trust(trustFile, pw).keys(dir.resolve("client.p12"), pw)))
                    .connect()) {
                assertEquals("hi", client.call(ECHO, "hi"));
            }
            RpcException refused = assertThrows(RpcException.class, () -> {
                try (RpcClient stranger = RpcClient.builder().address(server.address())
                        .tcp(cfg -> cfg.tls(TlsConfig.forClient().trust(trustFile, pw).keys(dir.resolve("stranger.p12"), pw)))
                        .connectTimeout(Duration.ofSeconds(10)).connect()) {
                    stranger.call(ECHO, "x", Duration.ofSeconds(10));
                }
            });
            assertTrue(refused.getMessage().contains("none from an issuer the server trusts"), refused.getMessage());
        }
        IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class,
                () -> TlsConfig.forServer(dir.resolve("server.p12"), "wrong".toCharArray()));
        assertTrue(wrong.getMessage().contains("server.p12"), wrong.getMessage());
    }
}
