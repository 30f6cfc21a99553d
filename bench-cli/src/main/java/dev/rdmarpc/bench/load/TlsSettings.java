package dev.rdmarpc.bench.load;

import java.nio.file.Path;

/**
 * TLS for a stack's servers and client connections: the files each side reads. Every stack runs TLS
 * {@value #PROTOCOL} only, with the JDK's own TLS (rdmarpc's {@code SSLEngine}; gRPC through Netty's JDK
 * provider), so the stacks compared negotiate the same cipher suite.
 *
 * <p>A server needs {@code certificateChain} and {@code privateKey}; a client reads
 * {@code trustedCertificates} and {@code verifyHostname}. One value can hold both, as {@code local}'s does.
 *
 * @param certificateChain    PEM file: the server's certificate first, then its issuers; {@code null} where no
 *                            server is started
 * @param privateKey          PEM file: the server's private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY});
 *                            {@code null} with {@code certificateChain}
 * @param trustedCertificates PEM file: the only issuers a client trusts; {@code null} for the JDK's default
 *                            trusted issuers ({@code cacerts})
 * @param verifyHostname      whether a client checks that the server's certificate names the address it
 *                            connected to
 */
public record TlsSettings(Path certificateChain, Path privateKey, Path trustedCertificates, boolean verifyHostname) {
    /** The one protocol version the bench's stacks allow. */
    public static final String PROTOCOL = "TLSv1.3";

    public TlsSettings {
        if ((certificateChain == null) != (privateKey == null)) {
            throw new IllegalArgumentException("a server's TLS needs both its certificate chain and its private key");
        }
    }

    /** Whether a server can be started with these settings (they hold a certificate chain and its key). */
    public boolean canServe() {
        return certificateChain != null;
    }
}
