/**
 * The load generator of the bench CLI and the small interface every stack under test implements.
 *
 * <p>A stack ({@link dev.rdmarpc.bench.load.EchoStack}) starts an echo server and opens client
 * connections; a connection hands out {@link dev.rdmarpc.bench.load.EchoCaller}s, each of which owns its
 * preallocated request and has at most one call outstanding. {@link dev.rdmarpc.bench.load.ClosedLoop}
 * drives one cell of the matrix (one request size at one concurrency): N callers, each keeping its calls
 * in flight back to back, latencies recorded in an HdrHistogram {@code Recorder}.
 * {@link dev.rdmarpc.bench.load.OpenLoop} drives a cell at a target rate instead: calls due on a fixed
 * schedule, each latency measured from the due time (coordinated omission accounted for).
 * {@link dev.rdmarpc.bench.load.StreamLoop} drives a server-streaming cell ({@link dev.rdmarpc.bench.load.Workload#stream}):
 * S streams opened with {@link dev.rdmarpc.bench.load.EchoConnection#openStream}, their messages counted by a
 * {@link dev.rdmarpc.bench.load.StreamListener} each, cancelled at the end of the cell.
 *
 * <p>This package is exported so that the baselines (gRPC-java, plain Netty), each loaded at run time by a
 * class loader of its own and living outside the module graph, can implement the same interface.
 */
package dev.rdmarpc.bench.load;
