package dev.rdmarpc.bench.load;

import java.time.Duration;

/**
 * One cell of the matrix: a request size at a concurrency level, and how long to run it.
 *
 * @param requestBytes  request payload size
 * @param responseBytes response payload size
 * @param concurrency   the concurrency asked for (number of closed-loop callers)
 * @param callers       callers actually run: {@code concurrency}, or fewer when the cap on bytes in
 *                      flight applies
 * @param pipeline      calls each caller sends back to back before it waits for all their responses
 * @param warmup        run before measuring; its latencies are discarded
 * @param measure       the measured interval
 */
public record CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline,
        Duration warmup, Duration measure) {

    public CellSpec {
        if (requestBytes < 1 || responseBytes < 0) {
            throw new IllegalArgumentException("sizes must be positive");
        }
        if (concurrency < 1 || callers < 1 || callers > concurrency || pipeline < 1) {
            throw new IllegalArgumentException("bad concurrency " + concurrency + "/" + callers + "/" + pipeline);
        }
    }

    /** Calls in flight at any moment: callers times pipeline depth. */
    public int inFlight() {
        return callers * pipeline;
    }

    /** Whether the cap on bytes in flight lowered the concurrency of this cell. */
    public boolean capped() {
        return callers < concurrency;
    }
}
