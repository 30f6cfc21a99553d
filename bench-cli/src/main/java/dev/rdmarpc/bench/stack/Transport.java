package dev.rdmarpc.bench.stack;

import dev.rdmarpc.bench.load.EchoStack;

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
}
