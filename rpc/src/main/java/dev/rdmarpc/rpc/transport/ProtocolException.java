package dev.rdmarpc.rpc.transport;

import java.io.IOException;

/** The peer sent bytes that break the protocol; the connection was closed because of them. */
public final class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message what was wrong */
    public ProtocolException(String message) {
        super(message);
    }
}
