package dev.rdmarpc.bench.load;

/**
 * One client connection of an {@link EchoStack}. Owned by the bench's matrix runner, which closes it once,
 * after closing every caller made from it.
 */
public interface EchoConnection extends AutoCloseable {

    /**
     * Makes a caller for calls of {@code requestBytes} bytes that expect {@code responseBytes} bytes back.
     * Everything a call needs (request buffer, listener) is allocated here, not per call.
     */
    EchoCaller newCaller(int requestBytes, int responseBytes);

    /** Closes the connection; idempotent. */
    @Override
    void close();
}
