/**
 * OpenTelemetry metrics and traces for rdmarpc: {@link dev.rdmarpc.opentelemetry.RdmarpcTelemetry} gives the
 * interceptors a client, pool or server takes and registers the transport gauges of a running server or pool.
 * Needs only {@code io.opentelemetry.api} (and its {@code io.opentelemetry.context}); the application brings
 * the SDK and exporters of its choice.
 */
module dev.rdmarpc.opentelemetry {
    requires transitive dev.rdmarpc.rpc;
    requires transitive io.opentelemetry.api;
    requires transitive io.opentelemetry.context;
    requires static dev.rdmarpc.ibverbs;

    exports dev.rdmarpc.opentelemetry;
}
