package dev.rdmarpc.examples.rpc;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The calls of {@link EchoExample} over RDMA: one call on each builder, {@code rdma(...)}; handlers
 * and calls stay the same. Needs an RDMA device (a NIC, or Soft-RoCE) and an IPv4 address of its
 * interface: the server binds there, and the client reaches it over the device. The server keeps
 * answering plain TCP clients on the same port.
 *
 * <pre>examples/run rdma &lt;address of the RDMA interface&gt;     e.g. examples/run rdma 198.18.0.2</pre>
 */
public final class RdmaExample {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<byte[], Integer> SIZE = Method.of("size", Codecs.BYTES, Codecs.INT);

    private RdmaExample() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: examples/run rdma <IPv4 address of an RDMA interface>");
            System.exit(2);
        }
        System.exit(run(args[0], new RdmaConfig(), Duration.ofSeconds(30), System.out));
    }

    /**
     * Serves and calls over RDMA on {@code address} with the given transport settings, each call bounded
     * by {@code timeout}; returns the exit code.
     */
    public static int run(String address, RdmaConfig config, Duration timeout, PrintStream out) throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress(address, 0))
                     .rdma(config)                                      // the only change from TCP
                     .register(ECHO, (ctx, req) -> req)
                     .registerBlocking(SIZE, (ctx, req) -> req.length)
                     .start();
             RpcClient client = RpcClient.builder().address(server.address()).rdma(config).connect()) {
            out.println("echo " + client.call(ECHO, "hello over rdma", timeout));
            byte[] large = new byte[1 << 20];                           // a 1 MiB request, split into SENDs
            CompletableFuture<Integer> f = client.callAsync(SIZE, large, CallOptions.DEFAULT.withTimeout(timeout));
            out.println("size " + f.get());
        }
        return 0;
    }
}
