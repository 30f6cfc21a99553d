package dev.rdmarpc.bench.load;

/**
 * The measured figures of one cell for one stack. Latencies are in microseconds and are {@code NaN}
 * when no call completed in the measured interval.
 *
 * @param stack         name of the stack, e.g. {@code rdmarpc-tcp}
 * @param requestBytes  request payload size
 * @param responseBytes response payload size
 * @param concurrency   concurrency asked for
 * @param inFlight      calls actually kept in flight (lower than concurrency times pipeline when capped)
 * @param connections   connections the calls were spread over
 * @param calls         calls completed in the measured interval
 * @param errors        calls that failed (warm-up included)
 * @param seconds       length of the measured interval
 * @param p50Us         median latency
 * @param p90Us         90th percentile latency
 * @param p99Us         99th percentile latency
 * @param p999Us        99.9th percentile latency
 * @param maxUs         largest latency
 * @param firstError    message of the first failure, or {@code null}
 */
public record CellResult(String stack, int requestBytes, int responseBytes, int concurrency, int inFlight,
        int connections, long calls, long errors, double seconds, double p50Us, double p90Us, double p99Us,
        double p999Us, double maxUs, String firstError) {

    /** Completed calls per second. */
    public double qps() {
        return seconds > 0 ? calls / seconds : 0;
    }

    /** Request payload throughput in Gb/s, as coro_rpc's table counts it (request bytes x QPS x 8). */
    public double gbps() {
        return qps() * requestBytes * 8 / 1e9;
    }
}
