package dev.rdmarpc.bench.report;

import dev.rdmarpc.bench.load.Workload;
import java.time.Duration;

/**
 * How a run was made, printed with its results.
 *
 * @param stack               name of the stack measured, e.g. {@code rdmarpc-tcp}
 * @param stackDescription    one line on how it was set up
 * @param baseline            name of the baseline stack, or {@code null}
 * @param baselineDescription one line on how the baseline was set up, or {@code null}
 * @param target              where the servers were: "loopback, same JVM" or an address
 * @param connections         connections per stack
 * @param pipeline            pipeline depth
 * @param ioThreads           I/O threads per side
 * @param warmup              warm-up per cell
 * @param measure             measured interval per cell
 * @param repeat              runs per cell; figures are medians when above 1
 * @param maxInFlightBytes    cap on bytes in flight
 * @param echo                whether responses are as large as requests
 * @param responseBytes       the fixed response size when not {@code echo}
 * @param environment         JVM and machine, one line
 * @param tls                 the TLS protocol versions every stack allowed, e.g. {@code TLSv1.3}, or {@code null}
 *                            when the run was plain TCP
 * @param tlsNegotiated       what each stack's server saw its first TLS connection negotiate, e.g.
 *                            {@code rdmarpc-tcp TLSv1.3 TLS_AES_256_GCM_SHA384}, or {@code null} when not known
 *                            (no TLS, or the servers ran in another process)
 * @param workload            what the cells measured: echo calls, or server streaming (then {@code pipeline},
 *                            {@code maxInFlightBytes}, {@code echo} and {@code responseBytes} do not apply)
 */
public record RunInfo(String stack, String stackDescription, String baseline, String baselineDescription,
        String target, int connections, int pipeline, int ioThreads, Duration warmup, Duration measure,
        int repeat, long maxInFlightBytes, boolean echo, int responseBytes, String environment, String tls,
        String tlsNegotiated, Workload workload) {

    public RunInfo {
        java.util.Objects.requireNonNull(workload, "workload");
    }

    /** A run of echo calls. */
    public RunInfo(String stack, String stackDescription, String baseline, String baselineDescription,
            String target, int connections, int pipeline, int ioThreads, Duration warmup, Duration measure,
            int repeat, long maxInFlightBytes, boolean echo, int responseBytes, String environment, String tls,
            String tlsNegotiated) {
        this(stack, stackDescription, baseline, baselineDescription, target, connections, pipeline, ioThreads, warmup,
                measure, repeat, maxInFlightBytes, echo, responseBytes, environment, tls, tlsNegotiated, Workload.echo);
    }

    /** A run of echo calls in plain TCP. */
    public RunInfo(String stack, String stackDescription, String baseline, String baselineDescription,
            String target, int connections, int pipeline, int ioThreads, Duration warmup, Duration measure,
            int repeat, long maxInFlightBytes, boolean echo, int responseBytes, String environment) {
        this(stack, stackDescription, baseline, baselineDescription, target, connections, pipeline, ioThreads, warmup,
                measure, repeat, maxInFlightBytes, echo, responseBytes, environment, null, null);
    }

    /** Whether the run's connections were TLS. */
    public boolean hasTls() {
        return tls != null;
    }

    /** Whether the cells were server streams rather than echo calls. */
    public boolean stream() {
        return workload == Workload.stream;
    }

    /** This run info with another workload. */
    public RunInfo withWorkload(Workload w) {
        return new RunInfo(stack, stackDescription, baseline, baselineDescription, target, connections, pipeline,
                ioThreads, warmup, measure, repeat, maxInFlightBytes, echo, responseBytes, environment, tls, tlsNegotiated, w);
    }

    /** Whether a baseline stack was measured too. */
    public boolean hasBaseline() {
        return baseline != null;
    }
}
