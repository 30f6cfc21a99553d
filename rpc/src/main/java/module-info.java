/**
 * The rdmarpc RPC layer: buffer pool, wire protocol and codecs, transports (TCP; RDMA later),
 * client and server.
 */
module dev.rdmarpc.rpc {
    requires transitive dev.rdmarpc.ibverbs;
    requires transitive dev.rdmarpc.rdmacm;
    requires transitive dev.rdmarpc.cuda;
    requires jdk.jfr;

    exports dev.rdmarpc.rpc;
    exports dev.rdmarpc.rpc.buffer;
    exports dev.rdmarpc.rpc.codec;
    exports dev.rdmarpc.rpc.protocol;
    exports dev.rdmarpc.rpc.transport;
    exports dev.rdmarpc.rpc.transport.tcp;
    exports dev.rdmarpc.rpc.gpu;
    exports dev.rdmarpc.rpc.transport.rdma;
}
