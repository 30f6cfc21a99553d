package dev.rdmarpc.rpc.transport;

import java.io.IOException;

/**
 * A connection was closed because nothing happened on it for longer than its idle timeout: no call in
 * flight, no response waiting to be written, no byte received.
 */
public final class IdleTimeoutException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message how long it was idle, and the setting that closed it */
    public IdleTimeoutException(String message) {
        super(message);
    }
}
