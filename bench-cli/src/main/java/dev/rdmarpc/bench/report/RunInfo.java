package dev.rdmarpc.bench.report;

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
 */
public record RunInfo(String stack, String stackDescription, String baseline, String baselineDescription,
        String target, int connections, int pipeline, int ioThreads, Duration warmup, Duration measure,
        int repeat, long maxInFlightBytes, boolean echo, int responseBytes, String environment) {

    /** Whether a baseline stack was measured too. */
    public boolean hasBaseline() {
        return baseline != null;
    }
}
