package dev.rdmarpc.rpc;

/**
 * Serves a streaming method ({@link RpcServer.Builder#registerStream}) on a virtual thread of its
 * own: reads with {@link ServerStream#receive}, writes with {@link ServerStream#send}, and ends the
 * stream by returning (OK) or throwing (an {@link RpcException}'s status, or {@code HANDLER_FAILED}
 * with the exception's message). Blocking in it is expected: a slow client holds back only this
 * stream. The stream counts among the server's {@code maxInFlight} calls until the handler returns.
 * An {@link AsyncStreamHandler} (a subtype) is served without a thread of its own instead.
 *
 * @param <Q> request message type
 * @param <R> response message type
 */
@FunctionalInterface
public interface StreamHandler<Q, R> {
    /**
     * @param stream the stream, valid until this returns
     * @throws Exception to end the stream with an error
     */
    void handle(ServerStream<Q, R> stream) throws Exception;
}
