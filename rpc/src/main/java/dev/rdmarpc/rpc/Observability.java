package dev.rdmarpc.rpc;

/**
 * Metrics and traces a server, client or pool turns on with one builder call:
 * {@link RpcServer.Builder#observability(Observability)} or {@link ClientBuilder#observability(Observability)}
 * adds its interceptor to the builder at that point (add it first, before the application's interceptors),
 * and once the server, client or pool is up registers what reads its counters ({@link #observe}); the
 * server, client or pool closes that registration once, when it closes, before its transport.
 * The opentelemetry module's {@code RdmarpcTelemetry} implements it.
 *
 * <p>Implementations are thread-safe: one may observe any number of servers, clients and pools.
 */
public interface Observability {
    /** @return the interceptor a server builder adds; the same object each time */
    ServerInterceptor serverInterceptor();

    /** @return the interceptor a client or pool builder adds; the same object each time */
    ClientInterceptor clientInterceptor();

    /**
     * @param server a started server
     * @return what stops reading its counters
     */
    AutoCloseable observe(RpcServer server);

    /**
     * @param client a connected client
     * @return what stops reading its counters
     */
    AutoCloseable observe(RpcClient client);

    /**
     * @param pool a built pool
     * @return what stops reading its counters
     */
    AutoCloseable observe(RpcClientPool pool);
}
