package dev.rdmarpc.bench.load;

import java.time.Duration;

/**
 * One cell of the matrix: a request size at a concurrency level, and how long to run it. A
 * {@link Workload#stream} cell is a message size at a number of concurrent streams.
 *
 * @param requestBytes  request payload size; of a stream cell, the size of the messages the server sends
 * @param responseBytes response payload size; of a stream cell, the message size too
 * @param concurrency   the concurrency asked for: closed-loop callers, or in an open loop the bound on calls
 *                      in flight; of a stream cell, the number of concurrent streams
 * @param callers       callers actually run: {@code concurrency}, or fewer when the cap on bytes in
 *                      flight applies (streams: always {@code concurrency})
 * @param pipeline      calls each caller sends back to back before it waits for all their responses
 * @param warmup        run before measuring; its latencies are discarded
 * @param measure       the measured interval
 * @param targetQps     open loop: calls per second due on a fixed schedule, total over all callers;
 *                      0 for a closed loop and for streams
 * @param workload      echo calls or server streaming
 */
public record CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline,
        Duration warmup, Duration measure, long targetQps, Workload workload) {

    public CellSpec {
        java.util.Objects.requireNonNull(workload, "workload");
        if (requestBytes < 1 || responseBytes < 0) {
            throw new IllegalArgumentException("sizes must be positive");
        }
        if (concurrency < 1 || callers < 1 || callers > concurrency || pipeline < 1) {
            throw new IllegalArgumentException("bad concurrency " + concurrency + "/" + callers + "/" + pipeline);
        }
        if (targetQps < 0 || targetQps > Schedule.MAX_RATE || (targetQps > 0 && pipeline != 1)) {
            throw new IllegalArgumentException("bad open-loop rate " + targetQps + " (pipeline " + pipeline + ")");
        }
        if (workload == Workload.stream && (targetQps != 0 || pipeline != 1 || callers != concurrency)) {
            throw new IllegalArgumentException("a stream cell has no rate, pipeline or cap");
        }
    }

    /** An echo cell, closed or open loop. */
    public CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline, Duration warmup,
            Duration measure, long targetQps) {
        this(requestBytes, responseBytes, concurrency, callers, pipeline, warmup, measure, targetQps, Workload.echo);
    }

    /** A server-streaming cell: {@code streams} streams of messages of {@code messageBytes} bytes. */
    public static CellSpec stream(int messageBytes, int streams, Duration warmup, Duration measure) {
        return new CellSpec(messageBytes, messageBytes, streams, streams, 1, warmup, measure, 0, Workload.stream);
    }

    /** A closed-loop echo cell. */
    public CellSpec(int requestBytes, int responseBytes, int concurrency, int callers, int pipeline, Duration warmup,
            Duration measure) {
        this(requestBytes, responseBytes, concurrency, callers, pipeline, warmup, measure, 0);
    }

    /** Whether this is a server-streaming cell ({@link StreamLoop}). */
    public boolean stream() {
        return workload == Workload.stream;
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
