package dev.rdmarpc.rpc;

/**
 * The server's end of a streaming call served by an {@link AsyncStreamHandler}: the client's
 * messages go to the handler's {@link StreamListener}, and nothing here waits. Sending, requesting
 * and readiness work as on {@link AsyncClientStream}. The call ends with {@link #close} (OK, with
 * trailers) or {@link #fail} (an error status); queued messages go out before the end. A cancel by
 * the client, the deadline or a closed connection end it instead: the listener's
 * {@link StreamListener#onEnd} says so ({@code CANCELLED}, {@code DEADLINE_EXCEEDED}), and what was
 * queued is dropped. The call counts among the server's {@code maxInFlight} until it ended.
 *
 * <p>Every method may be called from any thread, callbacks included.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
public interface AsyncServerStream<Q, R> extends CallContext {
    /**
     * Sends one message, or queues it; never waits. After the call ended it is dropped.
     *
     * @throws RpcException PAYLOAD_TOO_LARGE for a message over the maximum frame length (nothing is sent)
     * @throws IllegalStateException after {@link #close} or {@link #fail}
     */
    void send(R message);

    /** @return true when a {@link #send} would go out at once */
    boolean isReady();

    /** Asks for {@code n} (at least 1) more of the client's messages. */
    void request(int n);

    /**
     * Ends the call well, after the queued messages: the client's stream ends OK with
     * {@code trailers}; the listener's {@link StreamListener#onEnd} follows with no failure once it
     * went out. Later closes do nothing.
     */
    void close(Metadata trailers);

    /**
     * Ends the call with an error, after the queued messages: an {@link RpcException}'s status,
     * message and metadata, or {@code HANDLER_FAILED} with the throwable's message. Later closes do nothing.
     */
    void fail(Throwable failure);
}
