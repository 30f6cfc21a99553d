package dev.rdmarpc.rpc.transport;

import java.io.IOException;

/**
 * The server refused this client's TLS certificate, or its lack of one, where it requires one: in TLS
 * 1.3 it says so only after the client's side of the handshake, and the client's connect waits for
 * that verdict ({@code TlsConfig.certificateVerdictWait}); a verdict that comes after the wait closes
 * the connection with this. The message says why, as far as the server's alert tells. Clients see it
 * as {@code Status.UNAUTHENTICATED}, at the connect or at the calls on the connection it closed.
 */
public final class CertificateRefusedException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message why, in words
     * @param cause   the TLS alert it came with, or null
     */
    public CertificateRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
