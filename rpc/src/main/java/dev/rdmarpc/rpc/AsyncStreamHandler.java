package dev.rdmarpc.rpc;

/**
 * Serves a streaming method without a thread per call: registered like any stream handler
 * ({@link RpcServer.Builder#registerStream}), it is called on the connection's I/O thread when a
 * stream opens and returns the listener of the client's messages; it and its listener answer
 * through the {@link AsyncServerStream} (from any thread, never waiting). The server's interceptors
 * run around the call as around a {@link StreamHandler}'s.
 *
 * <p>{@link #open} must not block (it holds up the connection's other calls). Throwing from it ends
 * the stream at once with the exception's status ({@link RpcException}) or {@code HANDLER_FAILED}.
 *
 * <p>The server never calls {@link #handle} on such a handler: it serves it through {@link #open}.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
public interface AsyncStreamHandler<Q, R> extends StreamHandler<Q, R> {
    /**
     * A stream opened.
     *
     * @param stream the stream, to answer on until it ended
     * @return the listener of the client's messages and of the stream's end, not null
     * @throws Exception to end the stream with an error at once
     */
    StreamListener<Q> open(AsyncServerStream<Q, R> stream) throws Exception;

    /**
     * Not used: the server serves this handler through {@link #open}, without a thread.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default void handle(ServerStream<Q, R> stream) {
        throw new UnsupportedOperationException("an AsyncStreamHandler is served through open(AsyncServerStream)");
    }
}
