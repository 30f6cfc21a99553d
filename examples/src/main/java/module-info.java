/**
 * Runnable examples. {@code dev.rdmarpc.examples.rpc}: the RPC API (a client and a server, streams, TLS,
 * RDMA, a service interface), each a small main class run by {@code examples/run <name>}.
 * {@code dev.rdmarpc.examples.rping} speaks rdma-core's {@code rping} protocol (client and server, RDMA
 * READ and WRITE) on the verbs and connection-manager layers, and {@code dev.rdmarpc.examples.verbs} is a
 * minimal raw-verbs program. Not a library: nothing here is published. Needs
 * {@code --enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.rdmacm,dev.rdmarpc.rpc}.
 */
module dev.rdmarpc.examples {
    requires dev.rdmarpc.rdmacm;
    requires dev.rdmarpc.rpc;
    exports dev.rdmarpc.examples.rping;
    exports dev.rdmarpc.examples.verbs;
    exports dev.rdmarpc.examples.rpc;
}
