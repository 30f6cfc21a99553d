package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Metadata;
import java.lang.invoke.MethodHandles;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * Clients and server bindings of {@link RpcService} interfaces (see the package documentation).
 */
public final class Services {
    /** Every client made here, with its channel and service: what {@link #withTimeout} and {@link #withMetadata} copy. */
    private static final Map<Object, Made<?>> CLIENTS = Collections.synchronizedMap(new WeakHashMap<>());

    private record Made<I>(ServiceDescriptor<I> service, RpcChannel channel) {
    }

    private Services() {
    }

    /**
     * A copy of a service client whose calls, when they set no timeout of their own (a
     * {@link dev.rdmarpc.rpc.CallOptions} parameter without one, or no such parameter), have
     * {@code timeout}: the call fails with {@link dev.rdmarpc.rpc.Status#DEADLINE_EXCEEDED} when it is
     * not answered within it, counted from when each call is made. Streams opened through it get it
     * too. The original is unchanged; copies are cheap, make one per use if need be.
     * {@snippet :
     * Greeter fast = Services.withTimeout(greeter, Duration.ofMillis(100));
     * String hi = fast.hello("x");            // at most 100 ms
     * }
     *
     * @param client  a client made by {@link #client} (or by this method, or {@link #withMetadata})
     * @param timeout positive
     * @param <I>     the interface
     * @return the configured copy
     * @throws IllegalArgumentException when {@code client} was not made by this class, or the timeout is not positive
     */
    public static <I> I withTimeout(I client, Duration timeout) {
        long nanos = timeout.toNanos();
        if (nanos <= 0) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        Made<I> made = made(client);
        ConfiguredChannel c = configured(made.channel);
        return copy(made, new ConfiguredChannel(c.channel, nanos, c.metadata));
    }

    /**
     * A copy of a service client whose calls and streams carry {@code metadata}, with what a call
     * sets in its own {@link dev.rdmarpc.rpc.CallOptions#withMetadata} over it (a call's value replaces
     * this one's under the same key). Adds to what the client carried already.
     *
     * @param client   a client made by {@link #client} (or {@link #withTimeout}, or this method)
     * @param metadata the metadata
     * @param <I>      the interface
     * @return the configured copy
     * @throws IllegalArgumentException when {@code client} was not made by this class
     */
    public static <I> I withMetadata(I client, Metadata metadata) {
        Objects.requireNonNull(metadata, "metadata");
        Made<I> made = made(client);
        ConfiguredChannel c = configured(made.channel);
        return copy(made, new ConfiguredChannel(c.channel, c.timeoutNanos, c.metadata.withAll(metadata)));
    }

    @SuppressWarnings("unchecked")
    private static <I> Made<I> made(I client) {
        Made<?> made = CLIENTS.get(Objects.requireNonNull(client, "client"));
        if (made == null) {
            throw new IllegalArgumentException(client.getClass().getName() + " is not a client made by Services.client");
        }
        return (Made<I>) made;
    }

    private static ConfiguredChannel configured(RpcChannel channel) {
        return channel instanceof ConfiguredChannel c ? c : new ConfiguredChannel(channel, 0, Metadata.EMPTY);
    }

    private static <I> I copy(Made<I> made, ConfiguredChannel channel) {
        I client = made.service.newClient(channel);
        CLIENTS.put(client, new Made<>(made.service, channel));
        return client;
    }

    /**
     * A client of a service: an implementation of {@code type} whose RPC methods call {@code channel}.
     * Reads the interface each time; for many channels, build a {@link ServiceDescriptor} once and use
     * {@link #client(RpcChannel, ServiceDescriptor)}.
     *
     * @param channel where the calls go; the client does not own it (closing it is the caller's)
     * @param type    the interface, annotated {@link RpcService}
     * @param lookup  the caller's {@code MethodHandles.lookup()} (see {@link CodecRegistry#of})
     * @param <I>     the interface
     * @return the client, thread-safe as the channel is
     * @throws IllegalArgumentException when the interface cannot be a service (see {@link ServiceDescriptor})
     */
    public static <I> I client(RpcChannel channel, Class<I> type, MethodHandles.Lookup lookup) {
        return client(channel, ServiceDescriptor.of(type, lookup));
    }

    /**
     * A client of a service: an implementation of its interface whose RPC methods call
     * {@code channel}. A synchronous method is {@code channel.call(method, request, options)}, an
     * asynchronous one {@code channel.callAsync(...)}, with {@link dev.rdmarpc.rpc.CallOptions#DEFAULT}
     * unless the method takes options; failures are {@link dev.rdmarpc.rpc.RpcException}s, as with
     * those calls. A streaming method returns its {@link Streaming} bound to {@code channel}, built
     * with the client (the same object each call), whose {@code open} is
     * {@code channel.openStream(method, options)}. Default methods run their own body; {@code equals}
     * and {@code hashCode} are the identity's.
     *
     * @param channel where the calls go; the client does not own it
     * @param service the service
     * @param <I>     the interface
     * @return the client, thread-safe as the channel is
     */
    public static <I> I client(RpcChannel channel, ServiceDescriptor<I> service) {
        I client = Objects.requireNonNull(service, "service").newClient(Objects.requireNonNull(channel, "channel"));
        CLIENTS.put(client, new Made<>(service, channel));
        return client;
    }

    /**
     * Registers every RPC method of {@code impl} on {@code builder}.
     *
     * @param builder the server's builder
     * @param type    the interface, annotated {@link RpcService}
     * @param impl    its implementation, called from I/O threads and virtual threads at once
     * @param lookup  the caller's {@code MethodHandles.lookup()}: builds record codecs and calls the
     *                interface's methods (it must be able to)
     * @param <I>     the interface
     * @return {@code builder}
     * @throws IllegalArgumentException when the interface cannot be a service, or a method's wire id is
     *                                  registered already (nothing of this service is registered then
     *                                  if the interface is at fault)
     */
    public static <I> RpcServer.Builder register(RpcServer.Builder builder, Class<I> type, I impl,
                                                 MethodHandles.Lookup lookup) {
        return register(builder, ServiceDescriptor.of(type, lookup), impl);
    }

    /**
     * Registers every RPC method of {@code impl} on {@code builder}: a synchronous method with
     * {@code registerBlocking} (a virtual thread per call), or {@code register} (inline on the I/O
     * thread) when it is {@link RpcMethod#inline()}; an asynchronous one with {@code registerAsync}; a
     * streaming one with {@code registerStream}, with the handler of the {@link Streaming#serve} that
     * the implementation's method returns when called once, here.
     * The implementation's {@link dev.rdmarpc.rpc.CallOptions} parameter, if any, receives
     * {@link dev.rdmarpc.rpc.CallOptions#DEFAULT} (it is the client's): the call being served, with
     * its deadline, metadata, peer and cancellation, is {@link #context()}, read on the method's
     * thread. An exception it
     * throws answers the call as a handler's does: an {@link dev.rdmarpc.rpc.RpcException} with its
     * status, anything else {@link dev.rdmarpc.rpc.Status#HANDLER_FAILED}.
     *
     * @param builder the server's builder
     * @param service the service
     * @param impl    its implementation
     * @param <I>     the interface
     * @return {@code builder}
     * @throws IllegalArgumentException when {@code impl} does not implement the interface, or the lookup
     *                                  cannot call it, or a streaming method of it returns anything but
     *                                  {@code Streaming.serve(handler)} (or throws): nothing of the
     *                                  service is registered then; or a wire id is registered already
     */
    public static <I> RpcServer.Builder register(RpcServer.Builder builder, ServiceDescriptor<I> service, I impl) {
        return ServerBinding.register(builder, Objects.requireNonNull(service, "service"), impl);
    }

    /**
     * The call that the current thread's service method serves: peer, metadata, attachments, deadline
     * and cancellation ({@link CallContext}). Valid on that thread until the method returns (an
     * asynchronous method keeps the object until its future completes, as {@link dev.rdmarpc.rpc.AsyncHandler}
     * says). In a streaming method's handler it is the handler's {@link dev.rdmarpc.rpc.ServerStream},
     * on the handler's own thread (not on threads it starts).
     *
     * @return the context
     * @throws IllegalStateException outside a service method bound by {@link #register}
     */
    public static CallContext context() {
        CallContext c = ServerBinding.CURRENT.get();
        if (c == null) {
            throw new IllegalStateException("no call: Services.context() is for the thread running a service method");
        }
        return c;
    }
}
