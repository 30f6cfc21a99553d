package dev.rdmarpc.examples.rpc;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A bidirectional stream: the client sends numbers while a second thread reads the server's running
 * totals. Each direction has its own window ({@code streamWindowBytes}, 1 MiB by default): {@code send}
 * waits while the peer has that much unread, so neither side can be flooded.
 *
 * <pre>examples/run stream [count]</pre>
 */
public final class StreamExample {
    static final Method<Long, Long> RUNNING_SUM = Method.of("runningSum", Codecs.LONG, Codecs.LONG);

    private StreamExample() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args.length > 0 ? Integer.parseInt(args[0]) : 100_000, System.out));
    }

    /** Streams the numbers 1..{@code count} and prints the last running total; returns the exit code. */
    public static int run(int count, PrintStream out) throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                     .registerStream(RUNNING_SUM, stream -> {          // a virtual thread per stream
                         long sum = 0;
                         for (Long x; (x = stream.receive()) != null; ) { // null: the client half-closed
                             sum += x;
                             stream.send(sum);
                         }
                     })                                                 // returning ends the stream with OK
                     .start();
             RpcClient client = RpcClient.connect(server.address());
             ClientStream<Long, Long> stream = client.openStream(RUNNING_SUM,
                     CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1)))) {
            long[] last = new long[2];                                  // messages received, last total
            Thread reader = Thread.ofVirtual().start(() -> {
                try {
                    for (Long total; (total = stream.receive()) != null; ) { // null: the server ended with OK
                        last[0]++;
                        last[1] = total;
                    }
                } catch (Exception e) {
                    last[0] = -1;
                    out.println("reader failed: " + e);
                }
            });
            for (long i = 1; i <= count; i++) {
                stream.send(i);                                         // waits while the server has a window unread
            }
            stream.halfClose();
            reader.join();
            out.println("sent " + count + ", received " + last[0] + " totals, last " + last[1]);
            return last[0] == count && last[1] == (long) count * (count + 1) / 2 ? 0 : 1;
        }
    }
}
