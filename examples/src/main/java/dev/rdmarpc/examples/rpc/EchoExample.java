package dev.rdmarpc.examples.rpc;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * A client and a server over TCP on loopback: a method answered on the I/O thread, one that may block
 * (a virtual thread per call), blocking and asynchronous calls, metadata both ways, and an error status
 * the client sees.
 *
 * <pre>examples/run echo</pre>
 */
public final class EchoExample {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, Integer> LENGTH = Method.of("length", Codecs.STRING, Codecs.INT);
    static final Method<String, String> GREET = Method.of("greet", Codecs.STRING, Codecs.STRING);

    private EchoExample() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(System.out));
    }

    /** Runs the example, printing to {@code out}; returns the exit code. */
    public static int run(PrintStream out) throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                     .register(ECHO, (ctx, req) -> req)                 // inline on the I/O thread
                     .registerBlocking(LENGTH, (ctx, req) -> {          // may block: a virtual thread per call
                         Thread.sleep(10);
                         return req.length();
                     })
                     .register(GREET, (ctx, name) -> {
                         String user = ctx.requestMetadata().get("user");
                         if (user == null) {
                             throw new RpcException(Status.UNAUTHENTICATED, "no user in the metadata");
                         }
                         ctx.responseMetadata(Metadata.of("served-by", "echo-example"));
                         return "hello " + name + ", from " + user;
                     })
                     .start();
             RpcClient client = RpcClient.connect(server.address())) {
            String r = client.call(ECHO, "hello");                      // blocking
            CompletableFuture<Integer> f = client.callAsync(LENGTH, "hello"); // asynchronous
            out.println("echo " + r);
            out.println("length " + f.get());

            Reply<String> reply = client.exchange(GREET, "ada",
                    CallOptions.DEFAULT.withMetadata(Metadata.of("user", "bob")));
            out.println(reply.value() + " (served-by " + reply.metadata().get("served-by") + ")");
            try {
                client.call(GREET, "ada");
                out.println("greet without a user: answered, which it should not be");
                return 1;
            } catch (RpcException e) {
                out.println("greet without a user: " + e.status() + " " + e.getMessage());
            }
        }
        return 0;
    }
}
