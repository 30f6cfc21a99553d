package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.Observability;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.ServerInterceptor;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.BatchCallback;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * OpenTelemetry metrics and traces for rdmarpc clients, pools and servers, through the OpenTelemetry API
 * (the application brings the SDK and its exporters).
 * {@snippet :
 * RdmarpcTelemetry telemetry = RdmarpcTelemetry.create(openTelemetry);
 * RpcServer server = RpcServer.builder().observability(telemetry) // first, before other interceptors
 *         .register(ECHO, (ctx, req) -> req).start();
 * RpcClientPool pool = RpcClientPool.builder().observability(telemetry).build();
 * }
 * {@code observability(telemetry)} adds the interceptor and, once the server, client or pool is up, registers
 * its transport instruments (connections, buffer pool, RDMA counters), which its {@code close()} unregisters.
 * The same in two steps: {@code intercept(telemetry.serverInterceptor())}, then {@code telemetry.observe(server)}
 * after start, closing what it returns after the server.
 *
 * <p>Per call, on both sides: {@code rpc.client.*} / {@code rpc.server.*} calls started, calls finished by
 * status, calls in flight and a duration histogram, with the attributes {@code rpc.system=rdmarpc},
 * {@code rpc.service}, {@code rpc.method} and {@code rpc.rdmarpc.status_code}; a CLIENT and a SERVER span per
 * call, the server's the child of the client's through the W3C trace context the request metadata carries
 * (the OpenTelemetry instance's propagator). The per-call instruments run in the interceptors, so they see
 * what interceptors see: typed calls and streams on a client (the raw {@code send} and {@code sendInPlace}
 * are not intercepted), every call on a server. The transport instruments ({@code rdmarpc.*}) are read from
 * the source's existing counters at each collection. docs/observability.md lists every instrument.
 *
 * <p>Add the interceptor first (before the application's): an interceptor that refuses a call before this
 * one ran still gets its {@code afterCall}, which this one would count as a call it did not see start.
 * Thread-safe; one instance may serve any number of clients, pools and servers.
 */
public final class RdmarpcTelemetry implements Observability {
    /** The instrumentation scope's name, for the meter and the tracer. */
    public static final String SCOPE = "dev.rdmarpc";
    /** The default of {@link Builder#trackedServerCalls}. */
    public static final int TRACKED_SERVER_CALLS = 16_384;

    private final ClientTelemetry client;
    private final ServerTelemetry server;
    private final TransportGauges gauges;

    private RdmarpcTelemetry(Builder b) {
        Meter meter = b.metrics ? b.otel.getMeter(SCOPE) : null;
        Tracer tracer = b.traces ? b.otel.getTracer(SCOPE) : null;
        TextMapPropagator propagator = b.otel.getPropagators().getTextMapPropagator();
        MethodAttributes.Cache methods = new MethodAttributes.Cache();
        this.client = new ClientTelemetry(methods, meter == null ? null : new CallInstruments(meter, "client",
                b.messageSizes), tracer, propagator);
        this.server = new ServerTelemetry(methods, meter == null ? null : new CallInstruments(meter, "server",
                b.messageSizes), tracer, propagator, b.trackedServerCalls);
        this.gauges = meter == null ? null : new TransportGauges(meter);
    }

    /**
     * Metrics and traces on.
     *
     * @param openTelemetry where the instruments and spans go (its meter provider, tracer provider, propagators)
     * @return the telemetry
     */
    public static RdmarpcTelemetry create(OpenTelemetry openTelemetry) {
        return builder(openTelemetry).build();
    }

    /**
     * @param openTelemetry where the instruments and spans go
     * @return a builder: metrics and traces on by default
     */
    public static Builder builder(OpenTelemetry openTelemetry) {
        return new Builder(Objects.requireNonNull(openTelemetry, "openTelemetry"));
    }

    /** @return the interceptor a client or pool builder takes ({@code intercept(...)}); the same object each time */
    @Override
    public ClientInterceptor clientInterceptor() {
        return client;
    }

    /** @return the interceptor a server builder takes ({@code intercept(...)}); the same object each time */
    @Override
    public ServerInterceptor serverInterceptor() {
        return server;
    }

    /**
     * Reports the server's transport instruments (connections, bytes, refused, timed-out and cancelled calls,
     * its buffer pool, and the RDMA counters of an RDMA server) at every collection, with the attributes
     * {@code rdmarpc.role=server}, {@code rdmarpc.transport}, {@code server.address} and {@code server.port}.
     *
     * @param rpcServer a started server
     * @return what stops the reporting (close it when the server is closed); a no-op with metrics off
     */
    @Override
    public AutoCloseable observe(RpcServer rpcServer) {
        AttributesBuilder a = Attributes.builder().put(TransportGauges.ROLE, "server")
                .put(TransportGauges.TRANSPORT, rpcServer.transport().name());
        InetSocketAddress address = rpcServer.address();
        if (address.getAddress() != null) {
            a.put(TransportGauges.SERVER_ADDRESS, address.getAddress().getHostAddress());
        }
        a.put(TransportGauges.SERVER_PORT, (long) address.getPort());
        return observe(a.build(), rpcServer.metrics(), rpcServer.bufferPool(), rpcServer.transport());
    }

    /**
     * Reports the pool's transport instruments, as {@link #observe(RpcServer)} does, with
     * {@code rdmarpc.role=client}.
     *
     * @param pool a pool
     * @return what stops the reporting; a no-op with metrics off
     */
    @Override
    public AutoCloseable observe(RpcClientPool pool) {
        Attributes a = Attributes.builder().put(TransportGauges.ROLE, "client")
                .put(TransportGauges.TRANSPORT, pool.transport().name()).build();
        return observe(a, pool.metrics(), pool.bufferPool(), pool.transport());
    }

    /**
     * Reports one client's connection instruments and buffer pool, with {@code rdmarpc.role=client} (a single
     * client does not show its transport: no RDMA counters).
     *
     * @param rpcClient a client
     * @return what stops the reporting; a no-op with metrics off
     */
    @Override
    public AutoCloseable observe(RpcClient rpcClient) {
        Attributes a = Attributes.builder().put(TransportGauges.ROLE, "client").build();
        return observe(a, rpcClient.metrics(), rpcClient.bufferPool(), null);
    }

    private AutoCloseable observe(Attributes a, dev.rdmarpc.rpc.RpcMetrics metrics,
                                  dev.rdmarpc.rpc.buffer.BufferPool pool, dev.rdmarpc.rpc.transport.Transport t) {
        if (gauges == null) {
            return () -> { };
        }
        BatchCallback cb = gauges.observe(a, metrics, pool, t);
        return cb::close;
    }

    /** Which signals are on, and the server's call table. Not thread-safe. */
    public static final class Builder {
        private final OpenTelemetry otel;
        private boolean metrics = true;
        private boolean traces = true;
        private boolean messageSizes;
        private int trackedServerCalls = TRACKED_SERVER_CALLS;

        private Builder(OpenTelemetry otel) {
            this.otel = otel;
        }

        /**
         * @param on record the per-call and transport instruments; default true
         * @return this
         */
        public Builder metrics(boolean on) {
            this.metrics = on;
            return this;
        }

        /**
         * @param on make a span per call and carry the trace context in the request metadata; default true
         * @return this
         */
        public Builder traces(boolean on) {
            this.traces = on;
            return this;
        }

        /**
         * With metrics on, also record each call's request and response sizes ({@code rpc.client.request.size},
         * {@code rpc.client.response.size} and the server's): two more histogram records per call on each side.
         * Off by default for their cost on small calls: on a server answering 128 B calls 64 at a time on one I/O
         * thread they took the QPS from about 0.98 of telemetry off (metrics without sizes) to a median of 0.85
         * (docs/observability.md, "Cost").
         *
         * @param on record the size histograms; default false
         * @return this
         */
        public Builder messageSizes(boolean on) {
            this.messageSizes = on;
            return this;
        }

        /**
         * How many calls a server interceptor can follow at once between their start and end, for their
         * duration and span (a fixed table, so that following a call allocates nothing): more calls in flight
         * than this, some are counted but get no duration and no span. At least the servers'
         * {@code maxInFlight} plus their connections.
         *
         * @param calls at least 16; default 16,384
         * @return this
         */
        public Builder trackedServerCalls(int calls) {
            if (calls < CallTable.WINDOW) {
                throw new IllegalArgumentException("trackedServerCalls must be at least " + CallTable.WINDOW + ": " + calls);
            }
            this.trackedServerCalls = calls;
            return this;
        }

        /** @return the telemetry */
        public RdmarpcTelemetry build() {
            return new RdmarpcTelemetry(this);
        }
    }
}
