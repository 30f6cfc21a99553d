package dev.rdmarpc.examples.greeter;

import dev.rdmarpc.grpc.RdmarpcServerBuilder;
import io.grpc.Server;
import java.net.InetSocketAddress;

/**
 * Serves {@link GreeterService} over rdmarpc until killed:
 * {@code GreeterServer <bind address> <port> [rdma]}.
 */
public final class GreeterServer {
    private GreeterServer() {
    }

    /**
     * Starts the server; the one line that differs from a grpc-java server over HTTP/2 is the builder.
     *
     * @param address the address to listen on (an RDMA NIC's, for RDMA)
     * @param port    the port, 0 for any free one
     * @param rdma    whether to serve over RDMA (TCP clients are still answered)
     * @return the started server
     * @throws java.io.IOException when it cannot listen
     */
    public static Server start(String address, int port, boolean rdma) throws java.io.IOException {
        RdmarpcServerBuilder builder = RdmarpcServerBuilder.forAddress(new InetSocketAddress(address, port));
        if (rdma) {
            builder.rdma();
        }
        return builder.addService(new GreeterService()).build().start();
    }

    public static void main(String[] args) throws Exception {
        Server server = start(args[0], Integer.parseInt(args[1]), args.length > 2 && args[2].equals("rdma"));
        System.out.println("greeter listening on port " + server.getPort());
        server.awaitTermination();
    }
}
