package dev.rdmarpc.examples.rpc;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A server and a client over TLS 1.3 (the JDK's {@code SSLEngine}). The key stores are made with the
 * JDK's {@code keytool} the first time, in the directory given (a throwaway, self-signed certificate
 * for {@code localhost} and {@code 127.0.0.1}; use a CA-signed one in production):
 *
 * <pre>
 * keytool -genkeypair -alias server -keyalg EC -dname CN=localhost -ext san=dns:localhost,ip:127.0.0.1 \
 *         -validity 30 -keystore server.p12 -storetype PKCS12 -storepass changeit
 * keytool -exportcert -alias server -keystore server.p12 -storepass changeit -rfc -file server.pem
 * keytool -importcert -alias server -file server.pem -keystore trust.p12 -storetype PKCS12 -storepass changeit -noprompt
 * </pre>
 *
 * <pre>examples/run tls [directory]</pre>  (default: a new temporary directory)
 */
public final class TlsExample {
    static final Method<String, String> WHO = Method.of("who", Codecs.STRING, Codecs.STRING);
    private static final char[] PASSWORD = "changeit".toCharArray();

    private TlsExample() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("rdmarpc-tls-example");
        System.exit(run(dir, System.out));
    }

    /** Makes the key stores in {@code dir} unless they are there, then calls over TLS; returns the exit code. */
    public static int run(Path dir, PrintStream out) throws Exception {
        Path serverKeys = dir.resolve("server.p12");
        Path trust = dir.resolve("trust.p12");
        if (!Files.exists(serverKeys) || !Files.exists(trust)) {
            makeKeyStores(dir);
        }
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                     .tcp(cfg -> cfg.tls(TlsConfig.forServer(serverKeys, PASSWORD)))
                     .register(WHO, (ctx, name) -> "hello " + name + " over " + ctx.tlsSession().getProtocol())
                     .start();
             RpcClient client = RpcClient.builder().address(server.address())
                     .tcp(cfg -> cfg.tls(TlsConfig.forClient().trust(trust, PASSWORD)))
                     .connect()) {
            out.println(client.call(WHO, "ada"));
        }
        return 0;
    }

    /** The three keytool commands of the class comment, run with the keytool of the running JDK. */
    static void makeKeyStores(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        String pass = new String(PASSWORD);
        keytool(dir, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-dname", "CN=localhost",
                "-ext", "san=dns:localhost,ip:127.0.0.1", "-validity", "30",
                "-keystore", "server.p12", "-storetype", "PKCS12", "-storepass", pass);
        keytool(dir, "-exportcert", "-alias", "server", "-keystore", "server.p12", "-storepass", pass,
                "-rfc", "-file", "server.pem");
        keytool(dir, "-importcert", "-alias", "server", "-file", "server.pem", "-keystore", "trust.p12",
                "-storetype", "PKCS12", "-storepass", pass, "-noprompt");
    }

    private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException("keytool " + args[0] + " failed:\n" + output);
        }
    }
}
