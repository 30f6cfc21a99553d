package dev.rdmarpc.bench.load;

import java.time.Duration;

/**
 * One cell of the matrix: a request size at a concurrency level, and how long to run it.
 *
 * @param requestBytes  request payload size
 * @param responseBytes response payload size
 * @param concurrency   the concurrency asked for: closed-loop callers, or in an open loop the bound on calls
 *                      in flight
 * @param callers       callers actually run: {@code concurrency}, or fewer when the cap on bytes in
 *                      flight applies
 * @param pipeline      calls each caller sends back to back before it waits for all their responses
 * @param warmup        run before measuring; its latencies are discarded
 * @param measure       the measured interval
 * @param targetQps     open loop: calls per second due on a fixed schedule, total over all callers;
 *                      0 for a closed loop
 */
public record CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline,
        Duration warmup, Duration measure, long targetQps) {

    public CellSpec {
        if (requestBytes < 1 || responseBytes < 0) {
            throw new IllegalArgumentException("sizes must be positive");
        }
        if (concurrency < 1 || callers < 1 || callers > concurrency || pipeline < 1) {
            throw new IllegalArgumentException("bad concurrency " + concurrency + "/" + callers + "/" + pipeline);
        }
        if (targetQps < 0 || targetQps > Schedule.MAX_RATE || (targetQps > 0 && pipeline != 1)) {
            throw new IllegalArgumentException("bad open-loop rate " + targetQps + " (pipeline " + pipeline + ")");
        }
    }

    /** A closed-loop cell. */
    public CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline, Duration warmup,
            Duration measure) {
        this(requestBytes, responseBytes, concurrency, callers, pipeline, warmup, measure, 0);
    }

    /** Whether calls are sent on a fixed schedule ({@link OpenLoop}) rather than when earlier ones return. */
    public boolean openLoop() {
        return targetQps > 0;
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
