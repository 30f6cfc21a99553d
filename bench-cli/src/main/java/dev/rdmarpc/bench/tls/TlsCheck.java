package dev.rdmarpc.bench.tls;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PublicKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Checks TLS material the way rdmarpc will use it, for {@code doctor}: it loads the files with the same
 * {@link TlsConfig} methods a server or client calls ({@code forServer(chain, key)},
 * {@code forServer(keyStore, password)}, {@code forClient().trust(file)}), describes the certificates in plain
 * words (subject, issuer, validity, key algorithm, names), and for keys completes one TLS handshake on
 * loopback with them, which a key that does not belong to its certificate, or an expired certificate, fails.
 */
public final class TlsCheck {
    /** The TCP transport's loggers (System.Logger, which the JDK backs with java.util.logging). */
    private static final String TRANSPORT_LOG = "dev.rdmarpc.rpc.transport.tcp";
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    /**
     * What a check found.
     *
     * @param lines   what was loaded, one fact a line (empty when nothing loaded)
     * @param problem why the material cannot be used, one sentence; {@code null} when it can
     */
    public record Result(List<String> lines, String problem) {
        /** Whether the material loaded and, for keys, a handshake with it worked. */
        public boolean usable() {
            return problem == null;
        }
    }

    private TlsCheck() {
    }

    /** A server's certificate chain and PKCS#8 private key, PEM files, as {@code TlsConfig.forServer(chain, key)} reads them. */
    public static Result keys(Path certificateChain, Path privateKey) {
        TlsConfig server;
        try {
            server = TlsConfig.forServer(certificateChain, privateKey);
        } catch (IllegalArgumentException e) {
            return new Result(List.of(), e.getMessage());
        }
        List<X509Certificate> chain;
        try {
            chain = readCertificates(certificateChain);
        } catch (IOException | GeneralSecurityException e) {
            return new Result(List.of(), "cannot read the certificates in " + certificateChain + ": " + e.getMessage());
        }
        return withHandshake(server, chain);
    }

    /** A key store (PKCS#12 or JKS) holding a key and its certificate chain, as {@code TlsConfig.forServer(store, password)} uses it. */
    public static Result keyStore(Path file, char[] password) {
        KeyStore store;
        try {
            store = KeyStore.getInstance(file.toFile(), password);
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            String why = e.getMessage() != null && e.getMessage().contains("password")
                    ? "the password is wrong (" + e.getMessage() + ")" : String.valueOf(e.getMessage());
            return new Result(List.of(), "cannot open the key store " + file + ": " + why);
        }
        TlsConfig server;
        try {
            server = TlsConfig.forServer(store, password);
        } catch (IllegalArgumentException e) {
            return new Result(List.of(), "the key store " + file + " opens, but " + e.getMessage());
        }
        List<X509Certificate> chain = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        try {
            for (String alias : Collections.list(store.aliases())) {
                Certificate[] c = store.isKeyEntry(alias) ? store.getCertificateChain(alias) : null;
                if (c != null && c.length > 0 && chain.isEmpty()) {
                    for (Certificate x : c) {
                        chain.add((X509Certificate) x);
                    }
                }
                if (c != null) {
                    keys.add(alias);
                }
            }
        } catch (GeneralSecurityException | ClassCastException e) {
            return new Result(List.of(), "cannot read the entries of the key store " + file + ": " + e.getMessage());
        }
        if (chain.isEmpty()) {
            return new Result(List.of(), "the key store " + file + " holds no private key with a certificate (only "
                    + "trusted certificates?), so a server has nothing to show");
        }
        Result r = withHandshake(server, chain);
        List<String> lines = new ArrayList<>();
        lines.add("key store   " + store.getType() + ", key entries: " + String.join(", ", keys)
                + (keys.size() > 1 ? " (the first is described; the JDK picks one per handshake)" : ""));
        lines.addAll(r.lines());
        return new Result(lines, r.problem());
    }

    /** Issuers to trust, a PEM file, as {@code TlsConfig.forClient().trust(file)} reads it. */
    public static Result trust(Path certificates) {
        try {
            TlsConfig.forClient().trust(certificates);
        } catch (IllegalArgumentException e) {
            return new Result(List.of(), e.getMessage());
        }
        List<X509Certificate> all;
        try {
            all = readCertificates(certificates);
        } catch (IOException | GeneralSecurityException e) {
            return new Result(List.of(), "cannot read the certificates in " + certificates + ": " + e.getMessage());
        }
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            X509Certificate c = all.get(i);
            lines.add("trusts      " + c.getSubjectX500Principal().getName()
                    + (c.getBasicConstraints() >= 0 ? " (a CA)" : " (not a CA: trusted as itself only)"));
            lines.add("  valid     " + validity(c));
            lines.add("  key       " + keyAlgorithm(c.getPublicKey()));
        }
        return new Result(lines, null);
    }

    /** The chain's description, then one loopback handshake with these keys, trusting the chain's own certificates. */
    private static Result withHandshake(TlsConfig server, List<X509Certificate> chain) {
        List<String> lines = describe(chain);
        String failed = handshake(server, chain);
        if (failed != null && failed.contains("CertificateVerify")) {
            return new Result(lines, "the private key does not belong to the certificate: the signature it makes in a"
                    + " TLS handshake does not verify with the certificate's public key (" + failed + ")");
        }
        if (failed != null) {
            return new Result(lines, "the files load, but a TLS handshake with them fails: " + failed);
        }
        lines.add("handshake   a TLS 1.3 handshake on loopback with this key and certificate works");
        return new Result(lines, null);
    }

    /** The leaf certificate in detail, then the chain's length. */
    static List<String> describe(List<X509Certificate> chain) {
        X509Certificate leaf = chain.get(0);
        List<String> lines = new ArrayList<>();
        lines.add("subject     " + leaf.getSubjectX500Principal().getName());
        lines.add("issuer      " + leaf.getIssuerX500Principal().getName());
        lines.add("valid       " + validity(leaf));
        lines.add("key         " + keyAlgorithm(leaf.getPublicKey()));
        lines.add("names       " + names(leaf));
        lines.add("chain       " + chain.size() + " certificate(s)" + (chain.size() == 1
                ? ": the issuer's own certificate is not in the file (a client must already trust that issuer)" : ""));
        return lines;
    }

    /** "from ... until ... (expires in N days)", or what makes it not valid now. */
    static String validity(X509Certificate c) {
        Instant now = Instant.now();
        Instant from = c.getNotBefore().toInstant();
        Instant until = c.getNotAfter().toInstant();
        String state;
        if (now.isAfter(until)) {
            state = "EXPIRED " + Duration.between(until, now).toDays() + " day(s) ago";
        } else if (now.isBefore(from)) {
            state = "NOT VALID YET, for another " + Duration.between(now, from).toHours() + " hour(s)";
        } else {
            state = "expires in " + Duration.between(now, until).toDays() + " day(s)";
        }
        return "from " + DAY.format(from) + " until " + DAY.format(until) + " (" + state + ")";
    }

    /** "EC secp256r1", "RSA 2048 bits", "Ed25519". */
    static String keyAlgorithm(PublicKey key) {
        if (key instanceof ECPublicKey ec) {
            String curve = ec.getParams().toString();
            int cut = curve.indexOf(' ');
            return "EC " + (cut > 0 ? curve.substring(0, cut) : curve) + " (" + ec.getParams().getCurve().getField().getFieldSize()
                    + " bits)";
        }
        if (key instanceof RSAPublicKey rsa) {
            return key.getAlgorithm() + " " + rsa.getModulus().bitLength() + " bits";
        }
        if (key instanceof EdECPublicKey ed) {
            return ed.getParams().getName();
        }
        return key.getAlgorithm();
    }

    /** The subject alternative names, as a client checks them against the host it connected to. */
    static String names(X509Certificate c) {
        try {
            var sans = c.getSubjectAlternativeNames();
            if (sans == null || sans.isEmpty()) {
                return "none (a client that checks host names accepts it at no address)";
            }
            List<String> out = new ArrayList<>();
            for (List<?> san : sans) {
                int type = (Integer) san.get(0);
                out.add((type == 2 ? "DNS " : type == 7 ? "IP " : "type " + type + " ") + san.get(1));
            }
            return String.join(", ", out);
        } catch (CertificateParsingException e) {
            return "unreadable (" + e.getMessage() + ")";
        }
    }

    private static List<X509Certificate> readCertificates(Path file) throws IOException, GeneralSecurityException {
        List<X509Certificate> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
        }
        return out;
    }

    /**
     * Serves on a loopback port with {@code server} and connects once, trusting the chain's certificates and not
     * checking names: the handshake needs the key to sign for the certificate and the certificate to be valid now.
     *
     * @return why it failed, or {@code null}
     */
    private static String handshake(TlsConfig server, List<X509Certificate> chain) {
        TlsConfig client;
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            for (int i = 0; i < chain.size(); i++) {
                trust.setCertificateEntry("c" + i, chain.get(i));
            }
            client = TlsConfig.forClient().trust(trust).verifyHostname(false);
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            return "cannot trust the chain's certificates: " + e.getMessage();
        }
        server.protocols("TLSv1.3").handshakeTimeout(Duration.ofSeconds(10));
        // The probe's server would log the failure it is there to find; the doctor says it in its own words.
        Logger transportLog = Logger.getLogger(TRANSPORT_LOG);
        Level level = transportLog.getLevel();
        transportLog.setLevel(Level.OFF);
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).threadNamePrefix("bench-doctor-tls").tls(server)).start();
             RpcClient c = RpcClient.builder().address(s.address()).connectTimeout(Duration.ofSeconds(10))
                     .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).threadNamePrefix("bench-doctor-tls-client").tls(client)).connect()) {
            return null;
        } catch (RuntimeException e) {
            return e.getMessage() == null ? e.toString() : e.getMessage();
        } finally {
            transportLog.setLevel(level);
        }
    }
}
