package dev.rdmarpc.rpc;

/**
 * The client's end of a streaming call that holds no thread ({@link RpcChannel#openAsyncStream}):
 * what it receives goes to its {@link StreamListener}, and nothing here waits. It is the same
 * stream on the wire as a {@link ClientStream}: a server's {@link StreamHandler} or
 * {@link AsyncStreamHandler} serves both.
 *
 * <p><b>Sending.</b> {@link #send} writes the message when the server's window has room and the
 * connection's send queue takes it, else queues it here in order; queued messages go as the window
 * opens. {@link #isReady} says whether a send would go at once; when it was false, the listener's
 * {@link StreamListener#onReady} tells when it turns true. A sender that respects it holds at most
 * one message queued; one that ignores it queues without bound (its memory, its choice).
 *
 * <p><b>Receiving.</b> {@link #request} asks for that many more messages; none is told before it
 * is asked for, and unread ones wait in this side's receive window (the client's
 * {@code streamWindowBytes}), so a slow reader holds back this stream's server only.
 *
 * <p><b>Ending.</b> As with {@link ClientStream}: the server ends it (the listener's
 * {@link StreamListener#onEnd}, after every message, with its trailers), or {@link #cancel}, the
 * deadline ({@code DEADLINE_EXCEEDED}, no cancel is sent) or a closed connection end it here.
 *
 * <p>Every method may be called from any thread, callbacks included.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
public interface AsyncClientStream<Q, R> {
    /**
     * Sends one message, or queues it; never waits. After the stream ended it is dropped (the
     * listener hears or heard why).
     *
     * @param message the message, not null
     * @throws RpcException PAYLOAD_TOO_LARGE for a message over the maximum frame length (nothing is sent)
     * @throws IllegalStateException after {@link #halfClose}
     */
    void send(Q message);

    /** @return true when a {@link #send} would go out at once: the stream is open, nothing is queued, the server's window has room */
    boolean isReady();

    /**
     * Asks for {@code n} more messages.
     *
     * @param n at least 1
     */
    void request(int n);

    /** Tells the server that no more messages come (after the queued ones); idempotent. */
    void halfClose();

    /**
     * Cancels the stream if it has not ended: the server is told, queued messages are dropped, and
     * the listener's {@link StreamListener#onEnd} says {@code CANCELLED} (or {@code DEADLINE_EXCEEDED}
     * at or after the deadline, without telling the server, which stops at the same deadline).
     */
    void cancel();

    /** @return true once the stream ended (the listener may not have been told yet) */
    boolean isDone();
}
