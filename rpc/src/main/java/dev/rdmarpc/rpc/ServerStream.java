package dev.rdmarpc.rpc;

/**
 * The server's end of a streaming call, given to a {@link StreamHandler}: it reads the client's
 * messages and sends its own. The handler ends the stream by returning (status OK, with
 * {@link CallContext#responseMetadata} as trailers) or by throwing ({@link RpcException}'s status, or
 * {@code HANDLER_FAILED}).
 *
 * <p>{@link #send} waits while the client has a window's worth unread; {@link #receive} waits for
 * the next message. Both end with {@link RpcException} {@code CANCELLED} when the client cancelled
 * or went away, and at the stream's deadline (the handler's thread is also interrupted; the client
 * is answered {@code DEADLINE_EXCEEDED}). One thread at a time may send and one may receive.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
public interface ServerStream<Q, R> extends CallContext {
    /**
     * Waits for the client's next message.
     *
     * @return the message, or null once the client half-closed and every message was read
     * @throws RpcException CANCELLED when the stream was cancelled or its deadline passed,
     *                      PROTOCOL_ERROR when a message could not be decoded or the client sent past
     *                      its window
     */
    Q receive();

    /**
     * Sends one message to the client, waiting while the client's window is used up.
     *
     * @param message the message
     * @throws RpcException CANCELLED when the stream was cancelled or its deadline passed,
     *                      PAYLOAD_TOO_LARGE for a message over the maximum frame length,
     *                      CONNECTION_CLOSED
     */
    void send(R message);
}
