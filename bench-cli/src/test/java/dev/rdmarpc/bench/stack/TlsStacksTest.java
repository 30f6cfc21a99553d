package dev.rdmarpc.bench.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.load.CellResult;
import dev.rdmarpc.bench.load.EchoConnection;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.MatrixRunner;
import dev.rdmarpc.bench.load.StackOptions;
import dev.rdmarpc.bench.load.TlsSettings;
import dev.rdmarpc.bench.tls.ThrowawayCertificates;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * rdmarpc and the gRPC baseline over TLS, as the CLI sets them up: calls echo, the server sees TLS 1.3
 * negotiated, a client that trusts another issuer or reaches the server by a name its certificate lacks is
 * refused (unless told not to check the name), a plain client is refused, and the Netty baseline refuses TLS.
 */
@Timeout(120)
class TlsStacksTest {
    /** Made for 127.0.0.2 and localhost: reached as "localhost" the name matches, as 127.0.0.1 it does not. */
    static ThrowawayCertificates certs;
    static TlsSettings server;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = ThrowawayCertificates.create(List.of(InetAddress.getByName("127.0.0.2")));
        server = new TlsSettings(certs.serverCertificateChain(), certs.serverPrivateKey(), null, true);
    }

    @AfterAll
    static void removeCertificates() {
        certs.close();
    }

    static Supplier<EchoStack> stack(String name) {
        return name.equals("grpc") ? BaselineLoader::grpc : RdmarpcTcpStack::new;
    }

    private static StackOptions options(TlsSettings tls) {
        return new StackOptions(1, 64 * 1024, null, -1).withTls(tls);
    }

    /** The server's port, as a client reaches it by the name "localhost" (resolved to 127.0.0.1 here). */
    private static InetSocketAddress byName(EchoServer s) throws Exception {
        return new InetSocketAddress(InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1}), s.address().getPort());
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdmarpc", "grpc"})
    void echoesOverTls13AndTheServerSeesIt(String name) throws Exception {
        TlsSettings client = new TlsSettings(null, null, certs.caCertificate(), true);
        try (EchoStack serving = stack(name).get(); EchoStack calling = stack(name).get();
             EchoServer s = serving.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options(server))) {
            assertNull(serving.tlsNegotiated(), "nothing negotiated before a call");
            assertTrue(serving.describe(options(server)).contains("TLS TLSv1.3"), serving.describe(options(server)));
            MatrixPlan plan = new MatrixPlan(List.of(4096), List.of(2), -1, 1, 1, Duration.ofMillis(300),
                    Duration.ofMillis(700), 1 << 30, Duration.ofMillis(500), 1);
            CellResult r = MatrixRunner.run(List.of(new MatrixRunner.Target(calling, byName(s), options(client))), plan,
                    MatrixRunner.CellListener.NONE).get(0).get(0);
            assertEquals(0, r.errors(), String.valueOf(r.firstError()));
            assertTrue(r.calls() > 0, "calls " + r.calls());
            String negotiated = serving.tlsNegotiated();
            assertNotNull(negotiated, "the server saw a TLS session");
            assertTrue(negotiated.matches("TLSv1\\.3 TLS_(AES|CHACHA20)_\\w+"), negotiated);
            if (name.equals("grpc")) {
                // The JDK's order of preference, as rdmarpc's engines negotiate it, not gRPC's own list (AES-128 first).
                assertEquals("TLSv1.3 " + javax.net.ssl.SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites()[0],
                        negotiated);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdmarpc", "grpc"})
    void aNameTheCertificateLacksIsRefusedUnlessNotChecked(String name) throws Exception {
        try (EchoStack serving = stack(name).get();
             EchoServer s = serving.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options(server))) {
            try (EchoStack checking = stack(name).get()) {
                Exception e = assertThrows(Exception.class, () -> checking.connect(s.address(),
                        options(new TlsSettings(null, null, certs.caCertificate(), true))).close());
                assertTrue(name.equals("grpc") || e.getMessage().contains("does not name the host"), e.getMessage());
            }
            try (EchoStack trusting = stack(name).get();
                 EchoConnection c = trusting.connect(s.address(), options(new TlsSettings(null, null, certs.caCertificate(), false)))) {
                assertNotNull(c);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdmarpc", "grpc"})
    void aClientThatDoesNotTrustTheIssuerIsRefused(String name) throws Exception {
        try (EchoStack serving = stack(name).get(); EchoStack calling = stack(name).get();
             EchoServer s = serving.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options(server))) {
            // The JDK's own issuers (cacerts), which never signed the throwaway CA, names not even checked.
            Exception e = assertThrows(Exception.class,
                    () -> calling.connect(byName(s), options(new TlsSettings(null, null, null, false))).close());
            assertTrue(name.equals("grpc") || e.getMessage().contains("not trusted"), e.getMessage());
        }
    }

    @Test
    void aPlainRdmarpcClientGetsNoAnswerFromATlsServer() throws Exception {
        try (EchoStack serving = new RdmarpcTcpStack(); EchoStack calling = new RdmarpcTcpStack();
             EchoServer s = serving.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options(server))) {
            MatrixPlan plan = new MatrixPlan(List.of(128), List.of(1), -1, 1, 1, Duration.ZERO,
                    Duration.ofMillis(300), 1 << 30, Duration.ZERO, 1);
            CellResult r = MatrixRunner.run(List.of(new MatrixRunner.Target(calling, s.address(), options(null))), plan,
                    MatrixRunner.CellListener.NONE).get(0).get(0);
            // Not one call answered. Which side words the refusal first is a race: the server (a client without TLS
            // connected) or the client (the server's TLS alert is not an rdmarpc frame).
            assertEquals(0, r.calls(), String.valueOf(r.firstError()));
            assertTrue(r.errors() > 0, "errors " + r.errors());
            assertTrue(String.valueOf(r.firstError()).matches(".*requires TLS.*"), String.valueOf(r.firstError()));
            assertNull(serving.tlsNegotiated());
        }
    }

    @Test
    void theNettyBaselineRefusesTls() {
        try (EchoStack netty = BaselineLoader.netty()) {
            Exception e = assertThrows(IllegalArgumentException.class,
                    () -> netty.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options(server)));
            assertTrue(e.getMessage().contains("has no TLS"), e.getMessage());
        }
    }
}
