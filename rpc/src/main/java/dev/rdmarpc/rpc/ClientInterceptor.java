package dev.rdmarpc.rpc;

/**
 * Runs around every typed call a client makes ({@code call}, {@code exchange} and their
 * asynchronous forms, and {@code openStream}, whose end is the stream's; the raw {@code send} and
 * {@code sendInPlace}, the zero-allocation paths, are not intercepted): to add request metadata (a trace id, an auth token), refuse a call before it is
 * sent, read the response's metadata, log or count. Added with
 * {@link ClientBuilder#intercept(ClientInterceptor)}.
 *
 * <p><b>Order.</b> {@link #beforeCall} runs for each interceptor in the order they were added, each
 * given the metadata the previous one returned (the first gets the call's
 * {@link CallOptions#metadata()}), on the calling thread, before the call takes a slot or is
 * written; {@link #afterCall} runs once the call is over, for every interceptor, in the reverse
 * order, on the thread that completes the call (the connection's I/O thread for a response, the
 * caller's for a call that failed before it was sent), so it must not block.
 */
public interface ClientInterceptor {
    /**
     * Before the call is sent. Throw an {@link RpcException} to refuse it: the call fails with it
     * and is not sent; later interceptors' {@code beforeCall} do not run.
     *
     * @param method   the method called
     * @param metadata the request metadata so far
     * @return the request metadata to send: {@code metadata}, or a copy with more
     */
    Metadata beforeCall(Method<?, ?> method, Metadata metadata);

    /**
     * After the call. Exceptions are logged and ignored.
     *
     * @param method           the method called
     * @param status           {@link Status#OK}, or why it failed
     * @param responseMetadata what the server's response carried ({@link Metadata#EMPTY} when none,
     *                         or when no response came)
     * @param nanos            from {@code beforeCall} of the first interceptor to the call's end
     */
    default void afterCall(Method<?, ?> method, Status status, Metadata responseMetadata, long nanos) {
    }

    /**
     * After the call, with the request metadata that was sent: what the last interceptor's
     * {@link #beforeCall} returned (the call's own metadata when every {@code beforeCall} ran and
     * none added any; the metadata as far as it got when one refused the call). An interceptor that
     * keeps per-call state keyed by what it added to the request (a trace context, say) finds it
     * here. The channel calls this one; by default it calls
     * {@link #afterCall(Method, Status, Metadata, long)}. Exceptions are logged and ignored.
     *
     * @param method           the method called
     * @param requestMetadata  the request metadata as sent
     * @param status           {@link Status#OK}, or why it failed
     * @param responseMetadata what the server's response carried ({@link Metadata#EMPTY} when none)
     * @param nanos            from {@code beforeCall} of the first interceptor to the call's end
     */
    default void afterCall(Method<?, ?> method, Metadata requestMetadata, Status status, Metadata responseMetadata,
                           long nanos) {
        afterCall(method, status, responseMetadata, nanos);
    }

    /**
     * After the call, with the request metadata that was sent and the sizes of what went each way.
     * The channel calls this one; by default it calls
     * {@link #afterCall(Method, Metadata, Status, Metadata, long)}. Exceptions are logged and ignored.
     *
     * @param method           the method called
     * @param requestMetadata  the request metadata as sent
     * @param status           {@link Status#OK}, or why it failed
     * @param responseMetadata what the server's response carried ({@link Metadata#EMPTY} when none)
     * @param nanos            from {@code beforeCall} of the first interceptor to the call's end
     * @param requestBytes     bytes of the request as sent: the encoded message plus its attachment (frame
     *                         header and metadata left out); for a stream, of every message it sent; -1 when
     *                         nothing was sent (refused, or failed before it was written)
     * @param responseBytes    bytes of the response: the encoded message plus its attachment; for a stream,
     *                         of every message received; -1 when no response message came (an error status)
     */
    default void afterCall(Method<?, ?> method, Metadata requestMetadata, Status status, Metadata responseMetadata,
                           long nanos, long requestBytes, long responseBytes) {
        afterCall(method, requestMetadata, status, responseMetadata, nanos);
    }
}
