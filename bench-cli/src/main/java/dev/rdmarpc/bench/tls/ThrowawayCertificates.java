package dev.rdmarpc.bench.tls;

import dev.rdmarpc.bench.BenchException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * A throwaway certificate authority and one server certificate it signs, made at run time with the
 * running JDK's {@code keytool} (never fetched, never kept): EC P-256 keys, valid from a day before now
 * (a client whose clock is a little behind still accepts them) for {@value #VALID_DAYS} days.
 *
 * <p>The files live in a directory of their own under the system's temporary directory (readable by
 * its owner only), which {@link #close()} removes:
 * {@link #caCertificate()} ({@code ca.pem}: what a client trusts), {@link #serverCertificateChain()}
 * ({@code server.crt}: the server's certificate, then the CA's) and {@link #serverPrivateKey()}
 * ({@code server.key}: unencrypted PKCS#8); a shutdown hook removes it too if the JVM exits first (an
 * interrupted {@code local} or {@code server}). The server certificate names the addresses it is made for
 * (every address of this machine's interfaces when one of them is the wildcard address) and
 * {@code localhost}, so a client that checks host names accepts it at any of them.
 *
 * <p>Making one takes four {@code keytool} runs, each a short-lived JVM: about a second or two.
 */
public final class ThrowawayCertificates implements AutoCloseable {
    /** How long the certificates are valid, in days from now. */
    public static final int VALID_DAYS = 30;
    private static final String STORE_PASSWORD_VARIABLE = "RDMARPC_BENCH_STORE_PASSWORD";

    private final Path dir;
    private final List<String> names;
    private final Thread removeAtExit;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ThrowawayCertificates(Path dir, List<String> names) {
        this.dir = dir;
        this.names = names;
        this.removeAtExit = new Thread(this::remove, "bench-tls-throwaway-removal");
        Runtime.getRuntime().addShutdownHook(removeAtExit);
    }

    /**
     * Makes a CA and a server certificate for these addresses (and {@code localhost}).
     *
     * @param serverAddresses where the server listens; a wildcard address stands for every address of
     *                        this machine's interfaces that are up (link-local IPv6 left out)
     * @throws BenchException when keytool is missing or fails, with its output
     */
    public static ThrowawayCertificates create(Collection<InetAddress> serverAddresses) {
        List<String> names = names(serverAddresses);
        Path dir;
        try {
            dir = Files.createTempDirectory("rdmarpc-bench-tls-");
        } catch (IOException e) {
            throw new BenchException("Cannot make a directory for the throwaway TLS certificates: " + e.getMessage(), e);
        }
        ThrowawayCertificates certs = new ThrowawayCertificates(dir, names);
        try {
            certs.make();
            return certs;
        } catch (RuntimeException e) {
            certs.close();
            throw e;
        }
    }

    /** {@code ca.pem}: the throwaway CA's certificate, the one issuer a client must trust. */
    public Path caCertificate() {
        return dir.resolve("ca.pem");
    }

    /** {@code server.crt}: the server's certificate, then the CA's (PEM). */
    public Path serverCertificateChain() {
        return dir.resolve("server.crt");
    }

    /** {@code server.key}: the server's private key, unencrypted PKCS#8 (PEM). */
    public Path serverPrivateKey() {
        return dir.resolve("server.key");
    }

    /** The names the server certificate holds, keytool's form: {@code ip:127.0.0.1}, {@code dns:localhost}. */
    public List<String> serverNames() {
        return names;
    }

    /** Removes the directory and everything in it; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(removeAtExit);
        } catch (IllegalStateException e) {
            // Shutting down already: the hook removes the directory as well, which does no harm.
        }
        remove();
    }

    private void remove() {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            // Gone already, or a temporary directory: what cannot be removed now is the system's to clean.
        }
    }

    private void make() {
        // One random password for both stores, handed to keytool in its environment, not on its command line.
        byte[] random = new byte[12];
        new SecureRandom().nextBytes(random);
        String password = HexFormat.of().formatHex(random);
        String pass = "-storepass:env";
        keytool(password, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=rdmarpc bench throwaway CA", "-ext", "bc:c", "-startdate", "-1d",
                "-validity", String.valueOf(VALID_DAYS + 1), "-keystore", "ca.p12", "-storetype", "PKCS12",
                pass, STORE_PASSWORD_VARIABLE);
        keytool(password, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=rdmarpc bench server", "-validity", String.valueOf(VALID_DAYS + 1),
                "-keystore", "server.p12", "-storetype", "PKCS12", pass, STORE_PASSWORD_VARIABLE);
        keytool(password, "-certreq", "-alias", "server", "-keystore", "server.p12", pass, STORE_PASSWORD_VARIABLE,
                "-file", "server.csr");
        keytool(password, "-gencert", "-alias", "ca", "-keystore", "ca.p12", pass, STORE_PASSWORD_VARIABLE,
                "-infile", "server.csr", "-outfile", "server.pem", "-rfc", "-startdate", "-1d",
                "-validity", String.valueOf(VALID_DAYS), "-ext", "san=" + String.join(",", names));
        try {
            KeyStore ca = load(dir.resolve("ca.p12"), password);
            KeyStore server = load(dir.resolve("server.p12"), password);
            String caPem = pem("CERTIFICATE", ca.getCertificate("ca").getEncoded());
            Files.writeString(caCertificate(), caPem, StandardCharsets.US_ASCII);
            Files.writeString(serverCertificateChain(),
                    Files.readString(dir.resolve("server.pem"), StandardCharsets.US_ASCII).strip() + "\n" + caPem,
                    StandardCharsets.US_ASCII);
            PrivateKey key = (PrivateKey) server.getKey("server", password.toCharArray());
            Files.writeString(serverPrivateKey(), pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
            for (String f : List.of("ca.p12", "server.p12", "server.csr", "server.pem")) {
                Files.delete(dir.resolve(f));
            }
        } catch (IOException | GeneralSecurityException e) {
            throw new BenchException("Cannot write the throwaway TLS certificates in " + dir + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(Path file, String password) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, password.toCharArray());
        }
        return ks;
    }

    /** DER bytes as a PEM block of this type, 64 characters a line. */
    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** Runs the JDK's keytool in the directory with the store password in its environment; fails with its output. */
    private void keytool(String password, String... args) {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        if (!Files.isExecutable(keytool)) {
            throw new BenchException("Cannot make throwaway TLS certificates: this Java runtime has no keytool ("
                    + keytool + "); give the server's own with --tls-cert and --tls-key.");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(keytool.toString());
        // A short-lived JVM each: the C1 compiler only and the serial collector start it fastest.
        cmd.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().put(STORE_PASSWORD_VARIABLE, password);
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new BenchException("keytool " + args[0] + " did not finish within 60 s.");
            }
            if (p.exitValue() != 0) {
                throw new BenchException("keytool " + args[0] + " failed making the throwaway TLS certificates: "
                        + new String(out, StandardCharsets.UTF_8).strip());
            }
        } catch (IOException e) {
            throw new BenchException("Cannot run keytool (" + keytool + "): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("Interrupted while making the throwaway TLS certificates.", e);
        }
    }

    /** keytool's subject alternative names for these addresses, wildcards expanded, then {@code dns:localhost}. */
    static List<String> names(Collection<InetAddress> addresses) {
        Set<String> names = new LinkedHashSet<>();
        for (InetAddress a : addresses) {
            if (a.isAnyLocalAddress()) {
                for (InetAddress local : interfaceAddresses()) {
                    names.add("ip:" + local.getHostAddress());
                }
            } else {
                names.add("ip:" + a.getHostAddress());
            }
        }
        names.add("dns:localhost");
        return List.copyOf(names);
    }

    /** The addresses of the interfaces that are up, loopback first; link-local IPv6 (scoped) left out. */
    private static List<InetAddress> interfaceAddresses() {
        List<InetAddress> found = new ArrayList<>();
        found.add(InetAddress.getLoopbackAddress());
        try {
            for (NetworkInterface nif : NetworkInterface.networkInterfaces().toList()) {
                if (!nif.isUp()) {
                    continue;
                }
                for (InetAddress a : nif.inetAddresses().toList()) {
                    if (!(a instanceof Inet6Address && (a.isLinkLocalAddress() || ((Inet6Address) a).getScopeId() != 0))) {
                        found.add(a instanceof Inet6Address ? InetAddress.getByAddress(a.getAddress()) : a);
                    }
                }
            }
        } catch (SocketException | java.net.UnknownHostException e) {
            // The loopback address at least.
        }
        return found;
    }
}
