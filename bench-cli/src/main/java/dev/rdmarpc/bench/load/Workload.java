package dev.rdmarpc.bench.load;

/** What the cells of a run do: unary echo calls, or server-streaming calls. */
public enum Workload {
    /**
     * Echo calls: each caller sends a request and waits for its response ({@link ClosedLoop}, or
     * {@link OpenLoop} at a target rate). Figures: QPS and the latency of each call.
     */
    echo,
    /**
     * Server streaming: each of a cell's streams sends one small request, then the server sends messages
     * of the cell's size as fast as the stream's flow control allows, until the bench cancels the stream
     * at the end of the cell ({@link StreamLoop}). Figures: messages and payload bytes per second, and
     * the time between consecutive messages of a stream.
     */
    stream
}
