/**
 * Runnable examples of the verbs and connection-manager layers: {@code dev.rdmarpc.examples.rping}
 * speaks rdma-core's {@code rping} protocol (client and server, RDMA READ and WRITE), and
 * {@code dev.rdmarpc.examples.verbs} is a minimal raw-verbs program. Not a library: nothing here is
 * published. Needs {@code --enable-native-access=dev.rdmarpc.ibverbs,dev.rdmarpc.rdmacm}.
 */
module dev.rdmarpc.examples {
    requires dev.rdmarpc.rdmacm;
    exports dev.rdmarpc.examples.rping;
    exports dev.rdmarpc.examples.verbs;
}
