package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.StreamHandler;

/** The server's side of a streaming method ({@link Streaming#serve}): its handler, for {@link ServerBinding}. */
final class ServedStreaming<Q, R> implements Streaming<Q, R> {
    final StreamHandler<Q, R> handler;

    ServedStreaming(StreamHandler<Q, R> handler) {
        this.handler = handler;
    }

    @Override
    public ClientStream<Q, R> open(CallOptions options) {
        throw new IllegalStateException("this Streaming is a server's side (Streaming.serve): it serves streams and opens"
                + " none; open streams on a service client's method");
    }

    @Override
    public String toString() {
        return "Streaming.serve(" + handler + ")";
    }
}
