package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcChannel;
import java.util.Objects;

/**
 * A client's side of a streaming method: the method bound to the client's channel, built once per
 * client ({@link ServiceDescriptor#newClient}) and returned by the generated method each time.
 */
final class BoundStreaming implements Streaming<Object, Object> {
    private final RpcChannel channel;
    private final Method<Object, Object> method;

    BoundStreaming(RpcChannel channel, Method<Object, Object> method) {
        this.channel = channel;
        this.method = method;
    }

    @Override
    public ClientStream<Object, Object> open() {
        return channel.openStream(method, CallOptions.DEFAULT);
    }

    @Override
    public ClientStream<Object, Object> open(CallOptions options) {
        return channel.openStream(method, Objects.requireNonNull(options, "options"));
    }

    @Override
    public String toString() {
        return method.name() + " over " + channel;
    }
}
