/**
 * A grpc-java transport over rdmarpc: {@link dev.rdmarpc.grpc.RdmarpcChannelBuilder} and
 * {@link dev.rdmarpc.grpc.RdmarpcServerBuilder} build gRPC's own channel and server with rdmarpc
 * streams beneath them, over TCP or RDMA. The package {@code dev.rdmarpc.grpc.internal}, the only
 * one that uses grpc-java's {@code io.grpc.internal}, is not exported.
 */
module dev.rdmarpc.grpc {
    requires transitive dev.rdmarpc.rpc;
    requires transitive io.grpc;
    requires io.grpc.internal;
    requires com.google.common;
    requires static dev.rdmarpc.ibverbs;

    exports dev.rdmarpc.grpc;
}
