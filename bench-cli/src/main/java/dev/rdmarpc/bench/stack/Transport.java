package dev.rdmarpc.bench.stack;

import dev.rdmarpc.bench.load.EchoStack;
import java.net.InetAddress;

/** The rdmarpc transports the bench can measure. */
public enum Transport {
    /** TCP sockets, rdmarpc's default transport. */
    tcp,
    /** ibverbs reliable-connected queue pairs. */
    rdma;

    /** The rdmarpc stack over this transport, or a {@link BenchException} saying why it is not available. */
    public EchoStack stack() {
        return switch (this) {
            case tcp -> new RdmarpcTcpStack();
            case rdma -> new RdmarpcTcpStack(true);
        };
    }

    /**
     * The address {@code local} listens on when {@code --address} is not given: the loopback address
     * for TCP; for RDMA the IPv4 address of the first active RoCE v2 port (of {@code device} when given).
     */
    public InetAddress localAddress(String device) {
        return switch (this) {
            case tcp -> InetAddress.getLoopbackAddress();
            case rdma -> RdmaLocalAddress.find(device);
        };
    }
}
