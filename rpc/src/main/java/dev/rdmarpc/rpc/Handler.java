package dev.rdmarpc.rpc;

/**
 * A typed server-side method implementation.
 *
 * <p>Registered with {@link RpcServer.Builder#register} it runs inline on the connection's I/O
 * thread: it must not block, and the request (if its codec decodes to views) and the context are
 * only valid until it returns. Registered with {@link RpcServer.Builder#registerBlocking} it runs on a
 * virtual thread and may block; its request memory is a copy the server holds until it returns.
 *
 * <p>Throwing answers the call with an error: an {@link RpcException} with its own status and
 * message, anything else with {@link Status#HANDLER_FAILED} and the exception's message.
 *
 * @param <Q> request type
 * @param <R> response type
 */
@FunctionalInterface
public interface Handler<Q, R> {
    /**
     * @param context the call's context (peer, attachments)
     * @param request the decoded request
     * @return the response, encoded with the method's response codec
     * @throws Exception to answer with an error
     */
    R handle(CallContext context, Q request) throws Exception;
}
