package dev.rdmarpc.rpc.transport.tls;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for a transport ({@code TcpConfig.tls}, {@code RdmaConfig.tls}, whose hello connection
 * it secures), with the JDK's own TLS: the keys a side shows, the issuers it trusts, the protocol versions and the rules for the peer.
 *
 * <pre>{@code
 * // a server: its certificate chain and private key (PEM files, the key in PKCS#8)
 * TlsConfig server = TlsConfig.forServer(Path.of("server.crt"), Path.of("server.key"));
 * // a client: trusts the issuer of the server's certificate
 * TlsConfig client = TlsConfig.forClient().trust(Path.of("ca.crt"));
 * }</pre>
 *
 * <p>Defaults: TLS 1.3 only ({@link #protocols} allows 1.2 too); a client checks that the server's
 * certificate names the host it connected to ({@link #verifyHostname}); a server asks for no client
 * certificate ({@link #clientAuth}). Key and trust files are read when the configuration is made, so
 * a bad file fails there, with its name and what is wrong, not at the first connection.
 */
public final class TlsConfig {
    /** Whether a server asks its clients for certificates. */
    public enum ClientAuth {
        /** No client certificate is asked for. */
        NONE,
        /** One is asked for; a client without one is still served. */
        REQUEST,
        /** One is required and must be trusted: a client without one fails its handshake. */
        REQUIRE
    }

    /**
     * A server's check of each client once its TLS handshake is done: who may use this server,
     * beyond whose certificate is valid (which {@link ClientAuth#REQUIRE} already checks).
     */
    @FunctionalInterface
    public interface ClientCheck {
        /**
         * Decides whether a client may use its connection. Runs on the connection's I/O thread,
         * once per connection, before any of its frames is handled: it must be quick (look the
         * identity up in memory; do not call out). An exception it throws refuses the client, and is
         * logged.
         *
         * @param session the completed session: {@link SSLSession#getPeerCertificates()} (verified,
         *                when the server asks for client certificates), {@link SSLSession#getPeerPrincipal()},
         *                the protocol and cipher suite
         * @param client  the client's address
         * @return empty to accept the client; otherwise the reason it is refused, which the client
         *         sees: its calls (or its RDMA connect) fail with {@code PERMISSION_DENIED} and this
         *         reason, and the connection closes
         * @throws Exception anything, e.g. {@code SSLPeerUnverifiedException} from
         *                   {@link SSLSession#getPeerPrincipal()} when the client showed no certificate
         *                   ({@link ClientAuth#REQUEST}): the client is refused
         */
        Optional<String> refusal(SSLSession session, InetSocketAddress client) throws Exception;
    }

    private KeyManager[] keyManagers;
    private TrustManager[] trustManagers;
    private SSLContext context;
    private List<String> protocols = List.of("TLSv1.3");
    private ClientAuth clientAuth = ClientAuth.NONE;
    private boolean verifyHostname = true;
    private java.time.Duration handshakeTimeout = java.time.Duration.ofSeconds(10);
    private java.time.Duration certificateVerdictWait = java.time.Duration.ofSeconds(1);
    private ClientCheck clientCheck;

    private TlsConfig() {
    }

    /**
     * A server's configuration: it shows this certificate chain and proves it with this key.
     *
     * @param certificateChain PEM file: the server's certificate first, then its issuers
     * @param privateKey       PEM file: the private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY})
     */
    public static TlsConfig forServer(Path certificateChain, Path privateKey) {
        return new TlsConfig().keys(certificateChain, privateKey);
    }

    /**
     * A server's configuration from a key store that holds its key and certificate chain.
     *
     * @param keyStore a loaded key store (PKCS#12 or JKS)
     * @param password the key's password
     */
    public static TlsConfig forServer(KeyStore keyStore, char[] password) {
        return new TlsConfig().keys(keyStore, password);
    }

    /**
     * A server's configuration from a key store file, as the JDK's {@code keytool} writes it: the
     * store holds the server's key and certificate chain.
     *
     * @param keyStoreFile a PKCS#12 (or JKS) file, e.g. {@code server.p12}
     * @param password     the store's password, which is the key's too ({@code keytool}'s default for PKCS#12)
     */
    public static TlsConfig forServer(Path keyStoreFile, char[] password) {
        return new TlsConfig().keys(keyStoreFile, password);
    }

    /** A client's configuration: it trusts the JDK's default issuers until {@link #trust} says otherwise. */
    public static TlsConfig forClient() {
        return new TlsConfig();
    }

    /**
     * The keys this side shows: a server's, or a client's for mutual TLS.
     *
     * @param certificateChain PEM file: the certificate first, then its issuers
     * @param privateKey       PEM file: the private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY})
     * @return this
     */
    public TlsConfig keys(Path certificateChain, Path privateKey) {
        List<Certificate> chain = PemFiles.certificates(certificateChain);
        PrivateKey key = PemFiles.privateKey(privateKey);
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] none = new char[0];
            ks.setKeyEntry("key", key, none, chain.toArray(new Certificate[0]));
            return keys(ks, none);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("the key in " + privateKey + " does not go with the certificate in "
                    + certificateChain + ": " + e.getMessage(), e);
        }
    }

    /**
     * The keys this side shows, from a key store.
     *
     * @param keyStore a loaded key store (PKCS#12 or JKS)
     * @param password the key's password
     * @return this
     */
    public TlsConfig keys(KeyStore keyStore, char[] password) {
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keyStore, password);
            this.keyManagers = kmf.getKeyManagers();
            this.context = null;
            return this;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the key store's keys: " + e.getMessage(), e);
        }
    }

    /**
     * The keys this side shows, from a key store file ({@code keytool -genkeypair -keystore x.p12}).
     *
     * @param keyStoreFile a PKCS#12 (or JKS) file holding one key and its certificate chain
     * @param password     the store's password, which is the key's too
     * @return this
     * @throws IllegalArgumentException when the file cannot be read with that password
     */
    public TlsConfig keys(Path keyStoreFile, char[] password) {
        return keys(load(keyStoreFile, password), password);
    }

    /**
     * Trusts the certificates of a trust store file ({@code keytool -importcert -keystore trust.p12}),
     * and only these.
     *
     * @param trustStoreFile a PKCS#12 (or JKS) file of trusted certificates
     * @param password       its password
     * @return this
     * @throws IllegalArgumentException when the file cannot be read with that password
     */
    public TlsConfig trust(Path trustStoreFile, char[] password) {
        return trust(load(trustStoreFile, password));
    }

    private static KeyStore load(Path file, char[] password) {
        try {
            return KeyStore.getInstance(file.toFile(), password);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot read the key store " + file + " (PKCS#12 or JKS, with this password): "
                    + e.getMessage(), e);
        }
    }

    /**
     * Trusts these issuers, and only these: the peer's certificate must chain to one of them.
     *
     * @param certificates PEM file of one or more CA certificates
     * @return this
     */
    public TlsConfig trust(Path certificates) {
        List<Certificate> cas = PemFiles.certificates(certificates);
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                ks.setCertificateEntry("ca" + i, cas.get(i));
            }
            return trust(ks);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot trust the certificates in " + certificates + ": " + e.getMessage(), e);
        }
    }

    /**
     * Trusts the certificates of this trust store, and only these.
     *
     * @param trustStore a loaded key store of trusted certificates
     * @return this
     */
    public TlsConfig trust(KeyStore trustStore) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustStore);
            this.trustManagers = tmf.getTrustManagers();
            this.context = null;
            return this;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use the trust store: " + e.getMessage(), e);
        }
    }

    /**
     * Uses this context as it is, instead of the keys and trust set here.
     *
     * @param sslContext an initialized context
     * @return this
     */
    public TlsConfig sslContext(SSLContext sslContext) {
        this.context = Objects.requireNonNull(sslContext, "sslContext");
        this.keyManagers = null;
        this.trustManagers = null;
        return this;
    }

    /**
     * The protocol versions allowed, default {@code "TLSv1.3"} only.
     *
     * @param versions e.g. {@code "TLSv1.3", "TLSv1.2"}
     * @return this
     */
    public TlsConfig protocols(String... versions) {
        if (versions.length == 0) {
            throw new IllegalArgumentException("at least one protocol version");
        }
        this.protocols = List.of(versions);
        return this;
    }

    /**
     * Whether a server asks its clients for certificates (mutual TLS), default {@link ClientAuth#NONE}.
     *
     * @return this
     */
    public TlsConfig clientAuth(ClientAuth auth) {
        this.clientAuth = Objects.requireNonNull(auth, "auth");
        return this;
    }

    /**
     * Whether a client checks that the server's certificate names the host it connected to (its
     * name, or its IP address when it connected by address), default true. Turn it off only where
     * the trusted issuers vouch for nothing but the servers of this application.
     *
     * @return this
     */
    public TlsConfig verifyHostname(boolean verify) {
        this.verifyHostname = verify;
        return this;
    }

    /**
     * How long a connection may take to complete its TLS handshake, default 10 s: a server closes
     * (and logs) one that has not by then, so a peer that connects and says nothing, or stalls in the
     * handshake, holds a socket no longer; a client's connect also waits at most its own
     * {@code connectTimeout}.
     *
     * @return this
     */
    public TlsConfig handshakeTimeout(java.time.Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive: " + timeout);
        }
        this.handshakeTimeout = timeout;
        return this;
    }

    /**
     * How long a client's connect waits, after a TLS 1.3 handshake, for the server's verdict on the
     * client's certificate, default 1 s; zero: no wait. In TLS 1.3 the server checks the client's
     * certificate (or that it has one, where it requires one) only after the client's handshake is
     * done, so a refused client would otherwise learn it at its first call. Within this wait the
     * connect ends at the server's first record after the handshake: a JDK server sends its session
     * tickets then, so the wait is one round trip; a refusal (its alert, or a close) fails the connect
     * with {@code CertificateRefusedException} (clients see {@code Status.UNAUTHENTICATED}). A server
     * that sends nothing after the handshake (no session tickets) costs each connect the whole wait,
     * and then the connect goes on as if accepted; a refusal that comes after the wait fails the
     * connection's calls (over RDMA, its connect) with {@code Status.UNAUTHENTICATED} and the same
     * reason. Over TLS 1.2 the server's verdict is part of the
     * handshake and there is no wait. The connect's own {@code connectTimeout} bounds it too.
     *
     * @param wait zero or positive
     * @return this
     */
    public TlsConfig certificateVerdictWait(java.time.Duration wait) {
        if (wait.isNegative()) {
            throw new IllegalArgumentException("certificateVerdictWait must not be negative: " + wait);
        }
        this.certificateVerdictWait = wait;
        return this;
    }

    /** @return how long a TLS 1.3 client's connect waits for the server's verdict on its certificate */
    public java.time.Duration certificateVerdictWait() {
        return certificateVerdictWait;
    }

    /**
     * A server's check of each client after its handshake (a list of allowed certificate subjects,
     * say), default none: every client whose handshake completes is served.
     *
     * @param check decides per connection; null for none
     * @return this
     */
    public TlsConfig checkClients(ClientCheck check) {
        this.clientCheck = check;
        return this;
    }

    /** @return the server's check of its clients, or null */
    public ClientCheck clientCheck() {
        return clientCheck;
    }

    /** @return how long a TLS handshake may take */
    public java.time.Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** @return the protocol versions allowed */
    public List<String> protocols() {
        return protocols;
    }

    /** @return whether a server asks for client certificates */
    public ClientAuth clientAuth() {
        return clientAuth;
    }

    /** @return whether a client checks the server's name */
    public boolean verifyHostname() {
        return verifyHostname;
    }

    private synchronized SSLContext context() {
        if (context == null) {
            try {
                SSLContext c = SSLContext.getInstance("TLS");
                c.init(keyManagers, trustManagers, null);
                context = c;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
            }
        }
        return context;
    }

    @Override
    public String toString() {
        return "TlsConfig[protocols=" + protocols + ", clientAuth=" + clientAuth + ", verifyHostname=" + verifyHostname
                + ", handshakeTimeout=" + handshakeTimeout + ", certificateVerdictWait=" + certificateVerdictWait + (clientCheck != null ? ", clientCheck" : "") + ", keys=" + (keyManagers != null || context != null)
                + ", trust=" + (trustManagers != null ? "given" : context != null ? "the context's" : "the JDK's") + "]";
    }

    /**
     * A new engine for one connection: a client's (to {@code peer}) or a server's. For the transports.
     *
     * @param client true for the connecting side
     * @param peer   the address connected to (a client checks the server's certificate names its host)
     * @return an engine set up with these protocols and rules
     */
    public SSLEngine newEngine(boolean client, InetSocketAddress peer) {
        SSLEngine engine = client ? context().createSSLEngine(peer.getHostString(), peer.getPort()) : context().createSSLEngine();
        engine.setUseClientMode(client);
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(protocols.toArray(new String[0]));
        if (client) {
            if (verifyHostname) {
                p.setEndpointIdentificationAlgorithm("HTTPS");
            }
        } else if (clientAuth == ClientAuth.REQUIRE) {
            p.setNeedClientAuth(true);
        } else if (clientAuth == ClientAuth.REQUEST) {
            p.setWantClientAuth(true);
        }
        engine.setSSLParameters(p);
        return engine;
    }

    /**
     * @param t what a TLS connection failed with (an {@code SSLException}, or what it wraps)
     * @return a sentence that names why, from the JDK's exception and its causes
     */
    public static String describe(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof Described) {
                return c.getMessage(); // described once already
            }
        }
        for (Throwable c = t; c != null; c = c.getCause()) { // the most telling cause first, however deep
            if (c instanceof CertificateExpiredException) {
                return "the peer's certificate has expired (" + c.getMessage() + ")";
            }
            if (c instanceof CertificateNotYetValidException) {
                return "the peer's certificate is not valid yet (" + c.getMessage() + ")";
            }
        }
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            if (m.contains("No subject alternative") || m.contains("No name matching")) {
                return "the server's certificate does not name the host connected to (" + m + ")";
            }
            if (m.contains("PKIX path") || m.contains("unable to find valid certification path")) {
                return "the peer's certificate is not trusted: it does not chain to a trusted issuer (" + m + ")";
            }
            if (m.contains("(protocol_version)")) {
                return "no protocol version both sides allow (TlsConfig.protocols) (" + m + ")";
            }
            if (m.contains("Empty client certificate chain")) { // the server's side of it
                return "the client showed no certificate, and this server requires one (" + m + ")";
            }
            if (m.contains("certificate_required")) { // the client's
                return "the server requires a client certificate from an issuer it trusts, and this client showed none:"
                        + " it has no certificate (TlsConfig.keys), or none from an issuer the server trusts (" + m + ")";
            }
            if (m.contains("Received fatal alert")) {
                return "the peer refused the handshake (" + m + "): it does not trust this side's certificate, requires one"
                        + " this side did not show, or allows no common protocol version";
            }
            if (m.toLowerCase(java.util.Locale.ROOT).contains("unrecognized ssl message")) {
                return "the peer does not speak TLS (" + m + ")";
            }
            if (m.contains("closed the connection during the TLS handshake")) {
                return m;
            }
            if (m.contains("protocol") && m.contains("not") && (m.contains("supported") || m.contains("enabled"))) {
                return "no protocol version both sides allow (" + m + ")";
            }
        }
        return String.valueOf(t.getMessage());
    }

    /** A TLS failure whose message {@link #describe} wrote (a transport throws it once the handshake is done). */
    public static final class Described extends javax.net.ssl.SSLException {
        private static final long serialVersionUID = 1L;

        /** @param cause what the TLS connection failed with */
        public Described(Throwable cause) {
            super(describe(cause), cause);
        }
    }
}
