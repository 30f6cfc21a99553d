package dev.rdmarpc.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RdmarpcTelemetry} turned on with the one builder call {@code observability(telemetry)} on a server, a
 * pool and a single client over TCP: spans and per-call metrics appear, the transport instruments report while
 * the server, pool or client is open, and are unregistered once it is closed.
 */
@Timeout(60)
class OneCallTelemetryTcpTest {
    static final Method<String, String> ECHO = Method.of("Echo/say", Codecs.STRING, Codecs.STRING);
    static final AttributeKey<String> ROLE = AttributeKey.stringKey("rdmarpc.role");

    private InMemorySpanExporter spans;
    private InMemoryMetricReader metrics;
    private RdmarpcTelemetry telemetry;
    private RpcServer server;

    @BeforeEach
    void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        telemetry = RdmarpcTelemetry.create(otel);
        server = RpcServer.builder().observability(telemetry).register(ECHO, (ctx, req) -> req).start();
    }

    @AfterEach
    void tearDown() {
        server.close();
    }

    /** The points of the transport instruments with {@code rdmarpc.role=role}. */
    private long transportPoints(String role) {
        long n = 0;
        for (MetricData m : metrics.collectAllMetrics()) {
            if (m.getName().startsWith("rdmarpc.")) {
                for (PointData p : m.getData().getPoints()) {
                    if (role.equals(p.getAttributes().get(ROLE))) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    private long connectionsActive(String role) {
        return metrics.collectAllMetrics().stream().filter(m -> m.getName().equals("rdmarpc.connections.active"))
                .flatMap(m -> m.getLongSumData().getPoints().stream())
                .filter(p -> role.equals(p.getAttributes().get(ROLE))).mapToLong(p -> p.getValue()).sum();
    }

    /** Both spans of one call, linked: the interceptors were installed on both sides. */
    private void assertLinkedSpans() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (spans.getFinishedSpanItems().size() < 2 && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        List<SpanData> all = spans.getFinishedSpanItems();
        assertEquals(2, all.size(), "spans: " + all);
        SpanData client = all.stream().filter(s -> s.getKind() == SpanKind.CLIENT).findFirst().orElseThrow();
        SpanData srv = all.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
        assertEquals(client.getSpanId(), srv.getParentSpanId(), "the server span is the client span's child");
    }

    private void assertCallCounted(String side) {
        long finished = metrics.collectAllMetrics().stream()
                .filter(m -> m.getName().equals("rpc." + side + ".calls.finished"))
                .flatMap(m -> m.getLongSumData().getPoints().stream()).mapToLong(p -> p.getValue()).sum();
        assertEquals(1, finished, side + " calls finished");
    }

    @Test
    void aPoolAndAServerEachTurnedOnByOneCall() throws Exception {
        RpcClientPool pool = RpcClientPool.builder().observability(telemetry).build();
        try {
            assertEquals("hi", pool.channel(server.address()).call(ECHO, "hi"));
            assertLinkedSpans();
            assertCallCounted("client");
            assertCallCounted("server");
            assertEquals(1, connectionsActive("client"));
            assertEquals(server.metrics().connectionsActive(), connectionsActive("server"));
            assertTrue(transportPoints("server") > 0 && transportPoints("client") > 0);
        } finally {
            pool.close();
        }
        assertEquals(0, transportPoints("client"), "the pool's instruments are unregistered when it closes");
        assertTrue(transportPoints("server") > 0, "the server's still report");
        server.close();
        assertEquals(0, transportPoints("server"), "the server's instruments are unregistered when it closes");
    }

    @Test
    void aSingleClientTurnedOnByOneCall() throws Exception {
        RpcClient client = RpcClient.builder().address(server.address()).observability(telemetry).connect();
        try {
            assertEquals("hi", client.call(ECHO, "hi"));
            assertLinkedSpans();
            assertCallCounted("client");
            assertEquals(1, connectionsActive("client"));
        } finally {
            client.close();
        }
        client.close(); // closed once: a second close is a no-op
        assertEquals(0, transportPoints("client"), "the client's instruments are unregistered when it closes");
    }
}
