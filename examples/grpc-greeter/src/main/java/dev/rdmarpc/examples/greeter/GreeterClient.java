package dev.rdmarpc.examples.greeter;

import dev.rdmarpc.examples.greeter.proto.GreeterGrpc;
import dev.rdmarpc.examples.greeter.proto.HelloReply;
import dev.rdmarpc.examples.greeter.proto.HelloRequest;
import dev.rdmarpc.grpc.RdmarpcChannelBuilder;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Greets over rdmarpc: {@code GreeterClient <host> <port> <name> [rdma]}. */
public final class GreeterClient {
    private GreeterClient() {
    }

    /**
     * Calls both methods of the service and returns what came back.
     *
     * @param host the server's host
     * @param port its port
     * @param name who to greet
     * @param rdma whether to call over RDMA
     * @return the unary reply, then the three streamed ones
     * @throws InterruptedException when interrupted while the channel shuts down
     */
    public static List<String> greet(String host, int port, String name, boolean rdma) throws InterruptedException {
        RdmarpcChannelBuilder builder = RdmarpcChannelBuilder.forAddress(host, port);
        if (rdma) {
            builder.rdma();
        }
        ManagedChannel channel = builder.build();
        try {
            GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
            List<String> replies = new ArrayList<>();
            replies.add(stub.sayHello(HelloRequest.newBuilder().setName(name).build()).getMessage());
            Iterator<HelloReply> stream = stub.sayHelloRepeatedly(HelloRequest.newBuilder().setName(name).setCount(3).build());
            stream.forEachRemaining(r -> replies.add(r.getMessage()));
            return replies;
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    public static void main(String[] args) throws Exception {
        greet(args[0], Integer.parseInt(args[1]), args[2], args.length > 3 && args[3].equals("rdma")).forEach(System.out::println);
    }
}
