package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.Status;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import java.util.List;

/**
 * The per-call instruments of one side ({@code rpc.client.*} or {@code rpc.server.*}): calls started, calls
 * finished by status, calls in flight, the duration histogram, and (when asked for) histograms of request and
 * response sizes. Recording takes precomputed
 * {@link MethodAttributes}: nothing is built per call.
 */
final class CallInstruments {
    /** Bucket bounds of the duration histograms, in milliseconds: 10 us to 10 s. */
    static final List<Double> DURATION_BUCKETS_MS = List.of(0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
            5.0, 7.5, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0, 10000.0);

    /** Bucket bounds of the size histograms, in bytes: 0 to 64 MiB in powers of 4. */
    static final List<Long> SIZE_BUCKETS_BYTES = List.of(0L, 64L, 256L, 1024L, 4096L, 16384L, 65536L, 262144L,
            1048576L, 4194304L, 16777216L, 67108864L);

    private final LongCounter started;
    private final LongCounter finished;
    private final LongUpDownCounter inFlight;
    private final DoubleHistogram duration;
    private final LongHistogram requestSize;
    private final LongHistogram responseSize;

    /**
     * @param side  "client" or "server"
     * @param sizes whether to record the request and response size histograms
     */
    CallInstruments(Meter meter, String side, boolean sizes) {
        String p = "rpc." + side + ".";
        started = meter.counterBuilder(p + "calls.started").setUnit("{call}")
                .setDescription("Calls started (" + side + "), by method").build();
        finished = meter.counterBuilder(p + "calls.finished").setUnit("{call}")
                .setDescription("Calls finished (" + side + "), by method and status").build();
        inFlight = meter.upDownCounterBuilder(p + "calls.in_flight").setUnit("{call}")
                .setDescription("Calls in flight (" + side + "), by method").build();
        duration = meter.histogramBuilder(p + "duration").setUnit("ms")
                .setDescription("Call duration (" + side + "), by method and status")
                .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS_MS).build();
        if (!sizes) {
            requestSize = null;
            responseSize = null;
            return;
        }
        requestSize = meter.histogramBuilder(p + "request.size").ofLongs().setUnit("By")
                .setDescription("Request sizes (" + side + "): message plus attachment bytes; a stream's, all its"
                        + " messages; by method and status")
                .setExplicitBucketBoundariesAdvice(SIZE_BUCKETS_BYTES).build();
        responseSize = meter.histogramBuilder(p + "response.size").ofLongs().setUnit("By")
                .setDescription("Response sizes (" + side + "): message plus attachment bytes; a stream's, all its"
                        + " messages; by method and status")
                .setExplicitBucketBoundariesAdvice(SIZE_BUCKETS_BYTES).build();
    }

    void start(MethodAttributes m) {
        started.add(1, m.base);
        inFlight.add(1, m.base);
    }

    /**
     * @param nanos         the call's duration, or a negative number when it is not known (not recorded then)
     * @param requestBytes  the request's bytes, or -1 when none went (not recorded then)
     * @param responseBytes the response's bytes, or -1 when none came (not recorded then)
     */
    void finish(MethodAttributes m, Status status, long nanos, long requestBytes, long responseBytes) {
        Attributes a = m.withStatus(status);
        if (nanos >= 0) {
            duration.record(nanos / 1e6, a);
        }
        if (requestSize != null && requestBytes >= 0) {
            requestSize.record(requestBytes, a);
        }
        if (requestSize != null && responseBytes >= 0) {
            responseSize.record(responseBytes, a);
        }
        // last, so that a reader who sees the call finished sees its duration and sizes too
        inFlight.add(-1, m.base);
        finished.add(1, a);
    }
}
