package dev.rdmarpc.rpc;

/**
 * Runs around every call a server serves, whatever the handler's kind: to read the request's
 * metadata, add to the response's, refuse a call, log or count it. Registered with
 * {@link RpcServer.Builder#intercept(ServerInterceptor)}.
 *
 * <p><b>Order.</b> {@link #beforeCall} runs for each interceptor in the order they were added, then
 * the handler; {@link #afterCall} runs once the call is over, for every interceptor, in the reverse
 * order, also for a call an interceptor refused, a handler that failed, and a call cancelled or
 * stopped at its deadline. Every call gets both, as a pair: a blocking call or a stream stopped
 * (cancelled, or its deadline passed) while it waited for a thread still gets {@code beforeCall}
 * ({@link CallContext#isCancelled()} is then already true, and a {@link CallContext#onCancel}
 * listener added there runs at once), its handler does not run, and {@code afterCall} follows with
 * {@link Status#CANCELLED} or {@link Status#DEADLINE_EXCEEDED}.
 *
 * <p><b>Threads.</b> Both run where the handler runs: on the connection's I/O thread for an inline,
 * raw or asynchronous handler (so they must not block there: no I/O, no lock held for long), on the
 * call's virtual thread for a blocking one ({@link RpcServer.Builder#registerBlocking}), where they
 * may block. An asynchronous call's {@code afterCall} runs on the thread that completes its future
 * (or the I/O thread when it is stopped). A deferred raw call ({@link RawCall#defer()}) is over for
 * the interceptors when its handler returns.
 *
 * <p><b>Cost.</b> With no interceptor, none of this runs and nothing is allocated for it. An
 * interceptor that reads {@link CallContext#requestMetadata()} copies the metadata to the heap; one
 * on the raw path may read {@link RawCall#requestMetadataView()} in place instead (the context is a
 * {@link RawCall} there: {@code call instanceof RawCall raw}).
 */
@FunctionalInterface
public interface ServerInterceptor {
    /**
     * Before the handler. Refuse the call by throwing an {@link RpcException}: the client gets its
     * status (one that can travel: {@link Status#isWire()}; any other, or any other exception, is
     * sent as {@link Status#HANDLER_FAILED}) and message, with the response metadata set so far plus
     * the exception's own ({@link RpcException#withMetadata}); the handler and later interceptors'
     * {@code beforeCall} do not run.
     *
     * @param call the call; valid until {@code afterCall} returns
     */
    void beforeCall(CallContext call);

    /**
     * After the call: the response was written (or, for a cancelled call, is not sent). Exceptions
     * are logged and ignored.
     *
     * @param call   the call
     * @param status what the client was sent ({@link Status#OK}, an error status, among them
     *               {@link Status#DEADLINE_EXCEEDED} for a call stopped at its deadline), or
     *               {@link Status#CANCELLED} when the client cancelled it and nothing was sent
     */
    default void afterCall(CallContext call, Status status) {
    }
}
