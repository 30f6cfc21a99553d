package dev.rdmarpc.bench.stack;

import dev.rdmarpc.opentelemetry.RdmarpcTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * The OpenTelemetry SDK behind {@code --telemetry}: a meter provider whose periodic reader (every second)
 * exports to a TSV file, or to nowhere without one, and for {@code traces} a tracer provider (always
 * sampled) whose batch processor counts the spans and drops them. What a real exporter would cost beyond
 * that (serialising, the network) is not measured.
 */
final class BenchTelemetry implements AutoCloseable {
    private final OpenTelemetrySdk sdk;
    private final RdmarpcTelemetry telemetry;
    private final LongAdder spans = new LongAdder();

    /**
     * @param mode "metrics" or "traces"
     * @param file the TSV file, or null
     */
    BenchTelemetry(String mode, String file) {
        var b = OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(PeriodicMetricReader
                        .builder(new TsvExporter(file == null ? null : Path.of(file))).setInterval(Duration.ofSeconds(1))
                        .build()).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()));
        boolean traces = mode.equals("traces");
        if (traces) {
            b.setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(BatchSpanProcessor.builder(new SpanExporter() {
                @Override
                public CompletableResultCode export(Collection<SpanData> batch) {
                    spans.add(batch.size());
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
            }).build()).build());
        }
        sdk = b.build();
        telemetry = RdmarpcTelemetry.builder(sdk).metrics(true).traces(traces).build();
    }

    RdmarpcTelemetry telemetry() {
        return telemetry;
    }

    @Override
    public void close() {
        sdk.shutdown().join(10, java.util.concurrent.TimeUnit.SECONDS);
    }

    /**
     * Writes each collection's points as TSV lines: epoch milliseconds, metric name, unit, attributes
     * ({@code k=v;k=v}), value (a sum's or gauge's value, a histogram's count), histogram sum. Cumulative.
     */
    static final class TsvExporter implements MetricExporter {
        private final Writer out;

        TsvExporter(Path file) {
            try {
                out = file == null ? null : Files.newBufferedWriter(file, StandardCharsets.UTF_8);
                if (out != null) {
                    out.write("time_ms\tmetric\tunit\tattributes\tvalue\tsum\n");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + file, e);
            }
        }

        @Override
        public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
            return AggregationTemporality.CUMULATIVE;
        }

        @Override
        public synchronized CompletableResultCode export(Collection<MetricData> metrics) {
            if (out == null) {
                return CompletableResultCode.ofSuccess();
            }
            long now = System.currentTimeMillis();
            try {
                for (MetricData m : metrics) {
                    for (PointData p : m.getData().getPoints()) {
                        String attrs = p.getAttributes().asMap().entrySet().stream()
                                .map(e -> e.getKey().getKey() + "=" + e.getValue()).sorted().collect(Collectors.joining(";"));
                        String value;
                        String sum = "";
                        if (p instanceof HistogramPointData h) {
                            value = Long.toString(h.getCount());
                            sum = Double.toString(h.getSum());
                        } else if (p instanceof io.opentelemetry.sdk.metrics.data.LongPointData l) {
                            value = Long.toString(l.getValue());
                        } else if (p instanceof io.opentelemetry.sdk.metrics.data.DoublePointData d) {
                            value = Double.toString(d.getValue());
                        } else {
                            continue;
                        }
                        out.write(now + "\t" + m.getName() + "\t" + m.getUnit() + "\t" + attrs + "\t" + value + "\t" + sum + "\n");
                    }
                }
                out.flush();
                return CompletableResultCode.ofSuccess();
            } catch (IOException e) {
                return CompletableResultCode.ofFailure();
            }
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public synchronized CompletableResultCode shutdown() {
            try {
                if (out != null) {
                    out.close();
                }
            } catch (IOException e) {
                return CompletableResultCode.ofFailure();
            }
            return CompletableResultCode.ofSuccess();
        }
    }
}
