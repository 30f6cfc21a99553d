package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.RpcChannel;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * A channel whose calls get a service client's settings ({@link Services#withTimeout},
 * {@link Services#withMetadata}): a call without a timeout of its own gets {@code timeoutNanos}
 * (when set), and its metadata is {@code metadata} with the call's own entries over it. Everything
 * else is the underlying channel's.
 */
final class ConfiguredChannel implements RpcChannel {
    final RpcChannel channel;
    /** The timeout of calls that set none; 0: the channel's default. */
    final long timeoutNanos;
    final Metadata metadata;

    ConfiguredChannel(RpcChannel channel, long timeoutNanos, Metadata metadata) {
        this.channel = channel;
        this.timeoutNanos = timeoutNanos;
        this.metadata = metadata;
    }

    private CallOptions apply(CallOptions options) {
        CallOptions o = options;
        if (o.timeoutNanos() == 0 && timeoutNanos > 0) {
            o = o.withTimeout(java.time.Duration.ofNanos(timeoutNanos));
        }
        if (!metadata.isEmpty()) {
            o = o.withMetadata(metadata.withAll(o.metadata()));
        }
        return o;
    }

    @Override
    public <Q, R> R call(Method<Q, R> method, Q request, CallOptions options) {
        return channel.call(method, request, apply(options));
    }

    @Override
    public <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options) {
        return channel.exchange(method, request, apply(options));
    }

    @Override
    public <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options) {
        return channel.callAsync(method, request, apply(options));
    }

    @Override
    public <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options) {
        return channel.exchangeAsync(method, request, apply(options));
    }

    @Override
    public boolean send(Method<?, ?> method, MemorySegment payload, MemorySegment attachment, long timeoutNanos,
                        ResponseListener listener, long tag) {
        return send(method, payload, Metadata.EMPTY, attachment, timeoutNanos, listener, tag);
    }

    @Override
    public boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                        long timeoutNanos, ResponseListener listener, long tag) {
        long timeout = timeoutNanos > 0 ? timeoutNanos : this.timeoutNanos;
        Metadata md = this.metadata.isEmpty() ? metadata : this.metadata.withAll(metadata);
        return channel.send(method, payload, md, attachment, timeout, listener, tag);
    }

    @Override
    public boolean sendInPlace(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        return channel.sendInPlace(method, payload, listener, tag);
    }

    @Override
    public <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, CallOptions options) {
        return channel.openStream(method, apply(options));
    }

    @Override
    public <Q, R> dev.rdmarpc.rpc.AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, CallOptions options,
            dev.rdmarpc.rpc.StreamListener<? super R> listener, java.util.concurrent.Executor executor) {
        return channel.openAsyncStream(method, apply(options), listener, executor);
    }

    @Override
    public String toString() {
        return channel + " with " + (timeoutNanos > 0 ? "timeout " + timeoutNanos / 1_000_000 + " ms, " : "") + metadata;
    }
}
