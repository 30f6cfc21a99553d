package dev.rdmarpc.rpc.transport;

import java.io.IOException;

/**
 * The server's check of its clients ({@code TlsConfig.checkClients}) refused this connection after
 * its TLS handshake: the client's certificate was valid, but the server does not let this client in.
 * The message is the server's reason. Clients see it as {@code Status.PERMISSION_DENIED}.
 */
public final class PeerRefusedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message the server's reason */
    public PeerRefusedException(String message) {
        super(message);
    }
}
