package dev.rdmarpc.rpc;

import java.util.concurrent.CompletableFuture;

/**
 * A server method implementation that answers later: it runs on the connection's I/O thread (it must
 * not block there) and returns a future that any thread may complete; the response goes out when it
 * does. Register with {@code RpcServer.Builder.registerAsync}.
 *
 * <p>The context stays valid until the future completes, except {@link CallContext#requestAttachment()},
 * a view of the receive buffer that is valid only until {@code handle} returns. A cancel or the
 * call's deadline cancels the future ({@code cancel(true)}); the call is then answered as
 * {@link CallContext#isCancelled()} describes, and whatever the future completes with later is dropped.
 *
 * @param <Q> request type
 * @param <R> response type
 */
@FunctionalInterface
public interface AsyncHandler<Q, R> {
    /**
     * @param context the call's context
     * @param request the decoded request
     * @return the response to come; completed exceptionally to answer with an error (an
     *         {@link RpcException}'s status, or HANDLER_FAILED)
     * @throws Exception to answer with an error at once
     */
    CompletableFuture<R> handle(CallContext context, Q request) throws Exception;
}
