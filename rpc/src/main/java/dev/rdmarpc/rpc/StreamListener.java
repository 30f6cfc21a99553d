package dev.rdmarpc.rpc;

/**
 * What happens on an asynchronous stream ({@link AsyncClientStream}, {@link AsyncServerStream}), told
 * without a thread of the stream's own.
 *
 * <p><b>Threads.</b> The callbacks of one stream never run at the same time and happen in order:
 * messages in the order they were sent, then {@link #onHalfClose} (server side), and
 * {@link #onEnd} last, exactly once. They run on the connection's I/O thread (or, on the client,
 * on the executor given to {@link RpcChannel#openAsyncStream(Method, CallOptions, StreamListener,
 * java.util.concurrent.Executor)}), or on the thread whose {@code request}, {@code send} or
 * {@code cancel} made one due. So a callback must not block: it may send, request, half-close,
 * close or cancel on the stream (none of them waits) and hand longer work to an executor of its
 * own. An exception it throws is logged and the stream is cancelled.
 *
 * <p><b>Flow control.</b> {@link #onMessage} is called only for messages {@code request}ed; those
 * not yet requested wait in the stream's receive window (the peer stops sending once it is full).
 *
 * @param <T> the type of the messages received
 */
public interface StreamListener<T> {
    /**
     * A message arrived, and one was requested.
     *
     * @param message the message, never null; it outlives the call (the codec's value, not a view)
     */
    void onMessage(T message);

    /**
     * The stream can take another message without queueing it: the peer's window, used up or
     * blocked by a full send queue before, has room again ({@code isReady} is true). Also told once
     * when the stream is first ready.
     */
    default void onReady() {
    }

    /** The peer sent its last message (a server hears the client's half-close); every message before it was told. */
    default void onHalfClose() {
    }

    /**
     * The stream is over; nothing is told after this.
     *
     * @param failure null when it ended well (on the client: the server's OK, after every message;
     *                on the server: its own {@code close} went out); else why it ended: the peer's
     *                status, {@code CANCELLED} (a cancel on either side, a closed connection on the
     *                server), {@code DEADLINE_EXCEEDED}, {@code CONNECTION_CLOSED},
     *                {@code PROTOCOL_ERROR} (a peer past its window, a message that did not decode)
     * @param metadata on the client, the server's trailers (of an error too); on the server, empty
     */
    void onEnd(RpcException failure, Metadata metadata);
}
