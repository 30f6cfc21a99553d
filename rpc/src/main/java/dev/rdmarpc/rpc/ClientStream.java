package dev.rdmarpc.rpc;

/**
 * The client's end of a streaming call ({@link RpcChannel#openStream}): it sends requests and reads
 * responses, any number of each, in either order, until the server ends the call with a status.
 * The three usual shapes are ways of using it:
 * {@snippet :
 * // server streaming: one request, many responses
 * try (ClientStream<Query, Row> s = client.openStream(QUERY)) {
 *     s.send(query);
 *     s.halfClose();
 *     for (Row r; (r = s.receive()) != null; ) { ... }      // null: the server ended the stream OK
 * }
 * // client streaming: many requests, one response
 * try (ClientStream<Sample, Summary> s = client.openStream(UPLOAD)) {
 *     for (Sample x : samples) s.send(x);
 *     s.halfClose();
 *     Summary sum = s.receive();
 * }
 * // bidirectional: a sender thread and a reader thread, or send and receive in turn
 * }
 *
 * <p><b>Flow control.</b> Each direction has its own window (the receiver's
 * {@code streamWindowBytes}, default 1 MiB): {@link #send} waits while the server has that much
 * unread, so a slow reader holds back this stream's writer only, never the connection's other calls
 * or streams. What a stream holds unread on either side is at most its window plus one message.
 *
 * <p><b>Ending.</b> The server ends the stream: {@link #receive} returns {@code null} after the last
 * message when it ended well, or throws {@link RpcException} with the server's status (after the
 * messages that came before it). The stream is done once the server's end arrived, whether or not
 * the reader took every message. {@link #cancel} before that tells the server, whose handler is
 * interrupted, and fails this end's waits with {@code CANCELLED}. {@link #close} after
 * {@link #halfClose} first waits up to 200 ms for the server's end (dropping unread messages), so a
 * reader that took the messages it expected and closes does not cancel a stream the server is about
 * to end well; without a half-close, or when the end does not come in that time, it cancels. The
 * stream's deadline ({@link CallOptions#withTimeout}, or the client's {@code defaultStreamTimeout},
 * 30 s) ends it on both sides with {@code DEADLINE_EXCEEDED}: this side sends no cancel then, the
 * server stops the handler at the same deadline. A closed connection ends it with
 * {@code CONNECTION_CLOSED}.
 *
 * <p><b>Threads.</b> One thread at a time may send (and half-close), and one at a time may
 * receive; the two may be different threads. Blocking waits respond to interrupts (the stream is
 * then cancelled). Messages may not carry attachments or metadata; the stream's metadata travels
 * with its opening ({@link CallOptions#metadata}) and its end. Messages are never null (so a codec
 * that decodes to null, such as {@code Codecs.VOID}, cannot carry a stream's messages): a null from
 * {@link #receive} is the end.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
public interface ClientStream<Q, R> extends AutoCloseable {
    /**
     * Sends one message, waiting while the server's window is used up (until the stream's deadline).
     *
     * @param message the message
     * @throws RpcException when the stream ended (the server's status, or CANCELLED), its deadline
     *                      passed (DEADLINE_EXCEEDED), the message is too large (PAYLOAD_TOO_LARGE), or the
     *                      connection closed
     * @throws IllegalStateException after {@link #halfClose}
     */
    void send(Q message);

    /** Tells the server that no more messages come; idempotent. Receiving goes on. */
    void halfClose();

    /**
     * Waits for the next message from the server (until the stream's deadline).
     *
     * @return the message, or null when the server ended the stream successfully and every message
     *         was read
     * @throws RpcException with the server's status when it ended the stream with an error (after
     *                      every message that came before), DEADLINE_EXCEEDED at the deadline, CANCELLED after
     *                      {@link #cancel} or an interrupt, CONNECTION_CLOSED
     */
    R receive();

    /**
     * The metadata of the server's successful end of the stream (its trailers).
     *
     * @return the metadata; {@link Metadata#EMPTY} before the end, or when there is none
     */
    Metadata trailers();

    /**
     * Cancels the stream if it has not ended: the server is told (its handler interrupted), and waits
     * on this end fail with CANCELLED. Messages not yet read are dropped. At or after the stream's
     * deadline it ends with DEADLINE_EXCEEDED instead, and the server is not told (it stops the
     * handler at that deadline itself).
     */
    void cancel();

    /** @return true once the stream ended (the server's status arrived, or it was cancelled or failed) */
    boolean isDone();

    /**
     * Done with the stream: nothing when it ended; after {@link #halfClose}, waits up to 200 ms for
     * the server's end (dropping unread messages) and returns once it came; otherwise, or when it
     * did not come, {@link #cancel}.
     */
    @Override
    void close();
}
