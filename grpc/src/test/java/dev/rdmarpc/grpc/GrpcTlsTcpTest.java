package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.TestServiceGrpc;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** gRPC over rdmarpc's TLS: a key made here with the JDK's keytool, a client that trusts it and one that does not speak TLS. */
@Timeout(120)
class GrpcTlsTcpTest {
    private static final char[] PASSWORD = "changeit".toCharArray();

    @TempDir
    Path dir;

    private KeyStore serverKey() throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=server",
                "-ext", "san=ip:127.0.0.1", "-validity", "2", "-keystore", "server.p12", "-storetype", "PKCS12",
                "-storepass", new String(PASSWORD)).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve("server.p12"))) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }

    @Test
    void callsGoOverTlsAndTheServiceSeesIt() throws Exception {
        KeyStore key = serverKey();
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("server", key.getCertificate("server"));
        AtomicReference<SecurityLevel> level = new AtomicReference<>();
        ServerInterceptor seeLevel = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                level.set(call.getSecurityLevel());
                return next.startCall(call, h);
            }
        };
        Server server = RdmarpcServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .tls(TlsConfig.forServer(key, PASSWORD))
                .addService(ServerInterceptors.intercept(new InteropService(), seeLevel)).build().start();
        ManagedChannel tls = RdmarpcChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .tls(TlsConfig.forClient().trust(trust)).build();
        ManagedChannel plain = RdmarpcChannelBuilder.forAddress("127.0.0.1", server.getPort()).build();
        try {
            assertEquals(Empty.getDefaultInstance(), TestServiceGrpc.newBlockingStub(tls).emptyCall(Empty.getDefaultInstance()));
            assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, level.get());
            io.grpc.StatusRuntimeException refused = org.junit.jupiter.api.Assertions.assertThrows(io.grpc.StatusRuntimeException.class, () -> TestServiceGrpc.newBlockingStub(plain)
                    .withDeadlineAfter(30, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance()));
            assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), refused.getStatus().toString());
        } finally {
            for (ManagedChannel c : List.of(tls, plain)) {
                c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
