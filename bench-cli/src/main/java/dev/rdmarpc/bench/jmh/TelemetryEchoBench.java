package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.opentelemetry.RdmarpcTelemetry;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link EchoBench}'s zero-allocation raw echo (16 pipelined, TCP loopback) with rdmarpc-opentelemetry's metrics
 * on the server and without: {@code -p telemetry=off,metrics}, {@code -prof gc}. The raw handler's calls run the
 * server interceptor (calls started, finished, in flight, the duration histogram, the call table), with the SDK's
 * meter provider collecting every second into an exporter that drops the data; the client's raw {@code send} is
 * not intercepted. Expected with metrics: still 0 B/op ({@code gc.alloc.rate.norm}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TelemetryEchoBench {
    static final Method<MemorySegment, MemorySegment> RAW_ECHO = Method.raw("Bench/echo");

    @Param({"128"})
    public int size;

    /** off, or metrics (rdmarpc-opentelemetry's server interceptor with the SDK). */
    @Param({"off", "metrics"})
    public String telemetry;

    private OpenTelemetrySdk sdk;
    private RpcServer server;
    private RpcClient client;
    private Arena arena;
    private MemorySegment payload;
    private final EchoBench.Waiter waiter = new EchoBench.Waiter();

    @Setup(Level.Trial)
    public void setup() {
        RpcServer.Builder b = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .registerRaw(RAW_ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()));
        if (telemetry.equals("metrics")) {
            sdk = OpenTelemetrySdk.builder()
                    .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(PeriodicMetricReader
                            .builder(new Discard()).setInterval(Duration.ofSeconds(1)).build()).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                    .build();
            RdmarpcTelemetry t = RdmarpcTelemetry.builder(sdk).traces(false).build();
            b.intercept(t.serverInterceptor());
            server = b.start();
            t.observe(server);
        } else if (telemetry.equals("off")) {
            server = b.start();
        } else {
            throw new IllegalArgumentException("telemetry is off or metrics, not " + telemetry);
        }
        client = RpcClient.connect(server.address());
        arena = Arena.ofShared();
        payload = arena.allocate(size).fill((byte) 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        server.close();
        arena.close();
        if (sdk != null) {
            sdk.shutdown().join(10, TimeUnit.SECONDS);
        }
    }

    /** 16 raw calls in flight, then wait for all: time per call. */
    @Benchmark
    @OperationsPerInvocation(EchoBench.PIPELINE)
    public long rawPipelined() {
        return EchoBench.calls(client, RAW_ECHO, payload, waiter, EchoBench.PIPELINE);
    }

    /** Collects and drops: what a periodic exporter costs here is the collection, not the call path. */
    static final class Discard implements MetricExporter {
        @Override
        public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
            return AggregationTemporality.CUMULATIVE;
        }

        @Override
        public CompletableResultCode export(Collection<MetricData> metrics) {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
