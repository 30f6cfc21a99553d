package dev.rdmarpc.bench.load;

/**
 * One client connection of an {@link EchoStack}. Owned by the bench's matrix runner, which closes it once,
 * after closing every caller made from it and after every stream opened on it ended.
 */
public interface EchoConnection extends AutoCloseable {

    /**
     * Makes a caller for calls of {@code requestBytes} bytes that expect {@code responseBytes} bytes back.
     * Everything a call needs (request buffer, listener) is allocated here, not per call.
     */
    EchoCaller newCaller(int requestBytes, int responseBytes);

    /**
     * Opens a server-streaming call ({@link Workload#stream}): sends the one request of
     * {@link EchoProtocol#streamRequest}, after which the server sends messages of {@code messageBytes} bytes
     * as fast as the stack's flow control lets it, until {@link StreamCall#cancel}. Each message goes to
     * {@code listener} as the stack's ordinary streaming client receives it. Does not wait for the first
     * message; the stack may do the opening on the thread that will read the stream.
     *
     * @throws UnsupportedOperationException when this stack has no streaming workload (the default)
     */
    default StreamCall openStream(int messageBytes, StreamListener listener) {
        throw new UnsupportedOperationException("this stack has no streaming workload");
    }

    /** Closes the connection; idempotent. */
    @Override
    void close();
}
