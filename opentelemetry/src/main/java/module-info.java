/**
 * OpenTelemetry metrics and traces for rdmarpc: {@link dev.rdmarpc.opentelemetry.RdmarpcTelemetry} gives the
 * interceptors a client, pool or server takes and registers the transport gauges of a running server or pool.
 * Needs only {@code io.opentelemetry.api} (and its {@code io.opentelemetry.context}); the application brings
 * the SDK and exporters of its choice, and requires {@code io.opentelemetry.api} itself (an automatic module,
 * so not required transitively here).
 */
module dev.rdmarpc.opentelemetry {
    requires transitive dev.rdmarpc.rpc;
    requires io.opentelemetry.api;
    requires io.opentelemetry.context;
    requires static dev.rdmarpc.ibverbs;

    exports dev.rdmarpc.opentelemetry;
}
