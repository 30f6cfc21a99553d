package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.Status;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import java.util.List;

/**
 * The per-call instruments of one side ({@code rpc.client.*} or {@code rpc.server.*}): calls started, calls
 * finished by status, calls in flight, and the duration histogram. Recording takes precomputed
 * {@link MethodAttributes}: nothing is built per call.
 */
final class CallInstruments {
    /** Bucket bounds of the duration histograms, in milliseconds: 10 us to 10 s. */
    static final List<Double> DURATION_BUCKETS_MS = List.of(0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
            5.0, 7.5, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0, 10000.0);

    private final LongCounter started;
    private final LongCounter finished;
    private final LongUpDownCounter inFlight;
    private final DoubleHistogram duration;

    /** @param side "client" or "server" */
    CallInstruments(Meter meter, String side) {
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
    }

    void start(MethodAttributes m) {
        started.add(1, m.base);
        inFlight.add(1, m.base);
    }

    /** @param nanos the call's duration, or a negative number when it is not known (not recorded then) */
    void finish(MethodAttributes m, Status status, long nanos) {
        inFlight.add(-1, m.base);
        finished.add(1, m.withStatus(status));
        if (nanos >= 0) {
            duration.record(nanos / 1e6, m.withStatus(status));
        }
    }
}
