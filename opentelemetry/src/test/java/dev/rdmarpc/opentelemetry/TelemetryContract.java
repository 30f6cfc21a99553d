package dev.rdmarpc.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.codec.Codecs;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Spans and metrics of calls through {@link RdmarpcTelemetry}, read back with the SDK's in-memory exporter and
 * reader. Subclassed per transport (TCP on the host, RDMA in the Soft-RoCE VM).
 */
public abstract class TelemetryContract {
    static final Method<String, String> ECHO = Method.of("Echo/say", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> FAIL = Method.of("Echo/fail", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> LATER = Method.of("Echo/later", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> TRACEPARENT = Method.of("Echo/traceparent", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> CHAT = Method.of("Chat/talk", Codecs.STRING, Codecs.STRING);

    static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("rpc.system");
    static final AttributeKey<String> SERVICE = AttributeKey.stringKey("rpc.service");
    static final AttributeKey<String> METHOD = AttributeKey.stringKey("rpc.method");
    static final AttributeKey<Long> CODE = AttributeKey.longKey("rpc.rdmarpc.status_code");

    protected InMemorySpanExporter spans;
    protected InMemoryMetricReader metrics;
    protected OpenTelemetrySdk otel;
    protected RpcServer server;
    protected RpcClientPool pool;
    protected RdmarpcTelemetry telemetry;
    private final List<AutoCloseable> closers = new ArrayList<>();

    protected abstract RpcServer.Builder serverBuilder();

    protected abstract RpcClientPool.Builder poolBuilder();

    protected abstract String transportName();

    @BeforeEach
    public void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        start(RdmarpcTelemetry.create(otel));
    }

    private void start(RdmarpcTelemetry t) {
        telemetry = t;
        server = serverBuilder().intercept(t.serverInterceptor())
                .register(ECHO, (ctx, req) -> req)
                .register(FAIL, (ctx, req) -> {
                    throw new IllegalStateException("no " + req);
                })
                .registerAsync(LATER, (ctx, req) -> CompletableFuture.supplyAsync(() -> req + "!",
                        CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS)))
                .register(TRACEPARENT, (ctx, req) -> String.valueOf(ctx.requestMetadata().containsKey("traceparent")))
                .registerStream(CHAT, s -> {
                    for (String m; (m = s.receive()) != null; ) {
                        s.send(m + m);
                    }
                })
                .start();
        pool = poolBuilder().intercept(t.clientInterceptor()).build();
        closers.add(t.observe(server));
        closers.add(t.observe(pool));
    }

    private void restart(RdmarpcTelemetry t) throws Exception {
        tearDown();
        spans.reset();
        start(t);
    }

    @AfterEach
    public void tearDown() throws Exception {
        for (AutoCloseable c : closers) {
            c.close();
        }
        closers.clear();
        if (pool != null) {
            pool.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private RpcChannel channel() {
        return pool.channel(server.address());
    }

    /** Waits for both spans of {@code n} calls: the server ends its span after the response is written. */
    private List<SpanData> spans(int n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (spans.getFinishedSpanItems().size() < n && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        List<SpanData> all = spans.getFinishedSpanItems();
        assertEquals(n, all.size(), "spans: " + all);
        return all;
    }

    private static SpanData ofKind(List<SpanData> all, SpanKind kind) {
        return all.stream().filter(s -> s.getKind() == kind).findFirst().orElseThrow();
    }

    private MetricData metric(Collection<MetricData> all, String name) {
        return all.stream().filter(m -> m.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no metric " + name + " in " + all.stream().map(MetricData::getName).toList()));
    }

    private static long sum(MetricData m, Attributes where) {
        return m.getLongSumData().getPoints().stream().filter(p -> matches(p.getAttributes(), where))
                .mapToLong(LongPointData::getValue).sum();
    }

    private static boolean matches(Attributes have, Attributes want) {
        return want.asMap().entrySet().stream().allMatch(e -> e.getValue().equals(have.asMap().get(e.getKey())));
    }

    /** Waits until the server's duration histogram has {@code n} calls (afterCall runs after the response is out). */
    private Collection<MetricData> metricsAfterServerCalls(long n) throws InterruptedException {
        return metricsAfterCalls(n, List.of("server"));
    }

    /** The metrics once each side named has counted n calls finished (10 s at most). */
    private Collection<MetricData> metricsAfterCalls(long n, List<String> sides) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            Collection<MetricData> all = metrics.collectAllMetrics();
            boolean done = sides.stream().allMatch(side -> all.stream()
                    .filter(m -> m.getName().equals("rpc." + side + ".calls.finished"))
                    .mapToLong(m -> sum(m, Attributes.empty())).sum() >= n);
            if (done || System.nanoTime() > end) {
                return all;
            }
            Thread.sleep(5);
        }
    }

    @Test
    public void unaryCallHasALinkedClientAndServerSpan() throws Exception {
        assertEquals("hi", channel().call(ECHO, "hi"));
        List<SpanData> all = spans(2);
        SpanData client = ofKind(all, SpanKind.CLIENT);
        SpanData server = ofKind(all, SpanKind.SERVER);
        assertEquals(client.getTraceId(), server.getTraceId());
        assertEquals(client.getSpanId(), server.getParentSpanId(), "the server span is the client span's child");
        assertFalse(client.getParentSpanContext().isValid(), "no parent: a root span");
        for (SpanData s : all) {
            assertEquals("Echo/say", s.getName());
            assertEquals("rdmarpc", s.getAttributes().get(SYSTEM));
            assertEquals("Echo", s.getAttributes().get(SERVICE));
            assertEquals("say", s.getAttributes().get(METHOD));
            assertEquals(0L, s.getAttributes().get(CODE));
            assertEquals(StatusCode.UNSET, s.getStatus().getStatusCode());
        }
        assertNotNull(server.getAttributes().get(AttributeKey.longKey("network.peer.port")));
    }

    @Test
    public void aClientSpanIsTheChildOfTheCurrentSpan() throws Exception {
        Span parent = otel.getTracer("test").spanBuilder("parent").startSpan();
        Scope scope = parent.makeCurrent();
        try {
            channel().call(ECHO, "hi");
        } finally {
            scope.close();
            parent.end();
        }
        List<SpanData> all = spans(3);
        SpanData client = ofKind(all, SpanKind.CLIENT);
        SpanData server = ofKind(all, SpanKind.SERVER);
        assertEquals(parent.getSpanContext().getSpanId(), client.getParentSpanId());
        assertEquals(parent.getSpanContext().getTraceId(), server.getTraceId());
        assertEquals(client.getSpanId(), server.getParentSpanId());
    }

    @Test
    public void aFailedCallHasErrorSpansAndIsCountedByStatus() throws Exception {
        RpcException e = assertThrows(RpcException.class, () -> channel().call(FAIL, "x"));
        assertEquals(Status.HANDLER_FAILED, e.status());
        List<SpanData> all = spans(2);
        for (SpanData s : all) {
            assertEquals(StatusCode.ERROR, s.getStatus().getStatusCode());
            assertEquals((long) Status.HANDLER_FAILED.code(), s.getAttributes().get(CODE));
        }
        Collection<MetricData> m = metricsAfterServerCalls(1);
        Attributes failed = Attributes.of(METHOD, "fail", CODE, (long) Status.HANDLER_FAILED.code());
        assertEquals(1, sum(metric(m, "rpc.client.calls.finished"), failed));
        assertEquals(1, sum(metric(m, "rpc.server.calls.finished"), failed));
        assertEquals(0, sum(metric(m, "rpc.client.calls.finished"), Attributes.of(CODE, 0L)));
    }

    @Test
    public void callMetricsCountStartsEndsDurationsAndInFlight() throws Exception {
        RpcChannel ch = channel();
        for (int i = 0; i < 5; i++) {
            ch.call(ECHO, "a" + i);
        }
        assertEquals("b!", ch.callAsync(LATER, "b").get(10, TimeUnit.SECONDS));
        Collection<MetricData> m = metricsAfterServerCalls(6);
        Attributes echo = Attributes.of(SYSTEM, "rdmarpc", SERVICE, "Echo", METHOD, "say");
        for (String side : List.of("client", "server")) {
            assertEquals(5, sum(metric(m, "rpc." + side + ".calls.started"), echo), side);
            assertEquals(5, sum(metric(m, "rpc." + side + ".calls.finished"), echo.toBuilder().put(CODE, 0L).build()), side);
            assertEquals(0, sum(metric(m, "rpc." + side + ".calls.in_flight"), Attributes.empty()), side);
            MetricData d = metric(m, "rpc." + side + ".duration");
            assertEquals("ms", d.getUnit());
            HistogramPointData say = d.getHistogramData().getPoints().stream()
                    .filter(p -> "say".equals(p.getAttributes().get(METHOD))).findFirst().orElseThrow();
            assertEquals(5, say.getCount(), side);
            HistogramPointData later = d.getHistogramData().getPoints().stream()
                    .filter(p -> "later".equals(p.getAttributes().get(METHOD))).findFirst().orElseThrow();
            assertEquals(1, later.getCount(), side);
            // the asynchronous handler answers after 20 ms: its duration on both sides is at least that
            assertTrue(later.getSum() >= 19.0, side + " later took " + later.getSum() + " ms");
            // sizes only when asked for (RdmarpcTelemetry.Builder.messageSizes)
            assertTrue(m.stream().noneMatch(x -> x.getName().equals("rpc." + side + ".request.size")), side);
        }
    }

    @Test
    public void requestAndResponseSizesAreRecordedPerMethodOnBothSides() throws Exception {
        restart(RdmarpcTelemetry.builder(otel).messageSizes(true).build());
        RpcChannel ch = channel();
        ch.call(ECHO, "x".repeat(1000));
        ch.call(ECHO, "y".repeat(24));
        assertEquals("z!", ch.callAsync(LATER, "z").get(10, TimeUnit.SECONDS));
        assertThrows(RpcException.class, () -> ch.call(FAIL, "q".repeat(7)));
        try (ClientStream<String, String> s = ch.openStream(CHAT)) {
            s.send("abc");
            s.send("de");
            s.halfClose();
            assertEquals("abcabc", s.receive());
            assertEquals("dede", s.receive());
            assertNull(s.receive());
        }
        // both sides: a stream's end may be recorded after close() has returned
        Collection<MetricData> m = metricsAfterCalls(5, List.of("client", "server"));
        for (String side : List.of("client", "server")) {
            MetricData req = metric(m, "rpc." + side + ".request.size");
            MetricData resp = metric(m, "rpc." + side + ".response.size");
            assertEquals("By", req.getUnit());
            // a unary call's sizes are its message's encoded bytes (a string codec: one byte per ASCII char)
            assertSizes(req, "say", 2, 1024, side);
            assertSizes(resp, "say", 2, 1024, side);
            assertSizes(req, "later", 1, 1, side);
            assertSizes(resp, "later", 1, 2, side);
            // a failed call's request went; no response message came, so no response size
            assertSizes(req, "fail", 1, 7, side);
            assertSizes(resp, "fail", 0, 0, side);
            // a stream's sizes are the sums of its messages each way
            assertSizes(req, "talk", 1, 5, side);
            assertSizes(resp, "talk", 1, 10, side);
        }
    }

    private static void assertSizes(MetricData d, String method, long count, long sum, String side) {
        List<HistogramPointData> points = d.getHistogramData().getPoints().stream()
                .filter(p -> method.equals(p.getAttributes().get(METHOD))).toList();
        assertEquals(count, points.stream().mapToLong(HistogramPointData::getCount).sum(), side + " " + d.getName() + " " + method);
        assertEquals((double) sum, points.stream().mapToDouble(HistogramPointData::getSum).sum(), side + " " + d.getName() + " " + method);
    }

    @Test
    public void aStreamHasLinkedSpansAndIsCounted() throws Exception {
        try (ClientStream<String, String> s = channel().openStream(CHAT)) {
            s.send("a");
            s.send("b");
            s.halfClose();
            assertEquals("aa", s.receive());
            assertEquals("bb", s.receive());
            assertNull(s.receive());
        }
        List<SpanData> all = spans(2);
        SpanData client = ofKind(all, SpanKind.CLIENT);
        SpanData server = ofKind(all, SpanKind.SERVER);
        assertEquals(client.getSpanId(), server.getParentSpanId());
        assertEquals("Chat", server.getAttributes().get(SERVICE));
        assertEquals("talk", client.getAttributes().get(METHOD));
        Collection<MetricData> m = metricsAfterServerCalls(1);
        assertEquals(1, sum(metric(m, "rpc.server.calls.finished"), Attributes.of(METHOD, "talk", CODE, 0L)));
        assertEquals(1, sum(metric(m, "rpc.client.calls.finished"), Attributes.of(METHOD, "talk", CODE, 0L)));
    }

    @Test
    public void transportInstrumentsReadTheServersAndPoolsCounters() throws Exception {
        channel().call(ECHO, "x".repeat(1000));
        Collection<MetricData> m = metricsAfterServerCalls(1);
        AttributeKey<String> role = AttributeKey.stringKey("rdmarpc.role");
        Attributes srv = Attributes.of(role, "server", AttributeKey.stringKey("rdmarpc.transport"), transportName(),
                AttributeKey.longKey("server.port"), (long) server.address().getPort());
        Attributes cli = Attributes.of(role, "client");
        assertEquals(server.metrics().connectionsActive(), sum(metric(m, "rdmarpc.connections.active"), srv));
        assertEquals(1, sum(metric(m, "rdmarpc.connections.active"), cli));
        assertTrue(sum(metric(m, "rdmarpc.bytes.received"), srv) > 1000);
        assertEquals(pool.metrics().bytesSent(), sum(metric(m, "rdmarpc.bytes.sent"), cli));
        assertEquals(server.bufferPool().reservedBytes(), sum(metric(m, "rdmarpc.buffer_pool.reserved"), srv));
        assertTrue(sum(metric(m, "rdmarpc.buffer_pool.reserved"), cli) > 0);
        assertEquals("By", metric(m, "rdmarpc.buffer_pool.in_use").getUnit());
        boolean rdma = m.stream().anyMatch(x -> x.getName().equals("rdmarpc.rdma.credit_stalls"));
        assertEquals("rdma".equals(transportName()), rdma, "RDMA counters exactly for an RDMA transport");
    }

    @Test
    public void withTracesOffNoSpanAndNoTraceContextOnTheWire() throws Exception {
        restart(RdmarpcTelemetry.builder(otel).traces(false).build());
        assertEquals("false", channel().call(TRACEPARENT, "?"));
        metricsAfterServerCalls(1);
        assertEquals(List.of(), spans.getFinishedSpanItems());
        restart(RdmarpcTelemetry.create(otel));
        assertEquals("true", channel().call(TRACEPARENT, "?"));
    }

    @Test
    public void withMetricsOffNothingIsRecordedButSpansAre() throws Exception {
        InMemoryMetricReader quiet = InMemoryMetricReader.create();
        OpenTelemetrySdk other = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(quiet).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        restart(RdmarpcTelemetry.builder(other).metrics(false).build());
        channel().call(ECHO, "x");
        spans(2);
        assertEquals(List.of(), List.copyOf(quiet.collectAllMetrics()));
    }

    @Test
    public void everyServerCallLeavesTheTableAndEveryClientSpanEnds() throws Exception {
        RpcChannel ch = channel();
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(ch.callAsync(i % 2 == 0 ? ECHO : LATER, "c" + i));
        }
        for (CompletableFuture<String> f : calls) {
            f.get(30, TimeUnit.SECONDS);
        }
        spans(400);
        ServerTelemetry s = (ServerTelemetry) telemetry.serverInterceptor();
        assertEquals(0, s.trackedNow());
        assertEquals(0, s.untracked());
        assertEquals(0, ((ClientTelemetry) telemetry.clientInterceptor()).openSpans());
        List<SpanData> all = spans.getFinishedSpanItems();
        java.util.Set<String> clientIds = new java.util.HashSet<>();
        all.stream().filter(d -> d.getKind() == SpanKind.CLIENT).forEach(d -> clientIds.add(d.getSpanId()));
        assertEquals(200, clientIds.size(), "one client span per call");
        java.util.Set<String> parents = new java.util.HashSet<>();
        all.stream().filter(d -> d.getKind() == SpanKind.SERVER).forEach(d -> parents.add(d.getParentSpanId()));
        assertEquals(clientIds, parents, "each server span the child of its own call's client span");
    }
}
