package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.core.ClientCore;
import dev.rdmarpc.rpc.core.ClientCore.CallKind;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The one call-start path of every {@link RpcChannel}: each call method picks a connection
 * ({@link #pick()}), starts the call there, and, when the connection failed it at once, asks
 * {@link #retry} whether to try another. A client has one connection and never retries; a pool's
 * channel picks the least loaded connection to its endpoint and tries once more after one closed
 * under it. The default timeout is applied by the connection ({@link ClientCore}), nowhere else.
 */
abstract sealed class AbstractChannel implements RpcChannel permits RpcClient, RpcClientPool.EndpointChannel {
    /** A thread that owns no confined arena: memory it may access, every thread may. Never started. */
    private static final Thread NOT_THE_OWNER = new Thread(() -> { }, "rdmarpc-accessibility-probe");

    /**
     * @return the connection the next call goes to; the caller hands it to {@link #started} once the
     *         call holds its slot there or failed to start (whichever connection it ended on)
     */
    abstract ClientCore pick();

    /** The call {@link #pick} (or {@link #retry}) gave {@code c} to has started there, or failed to start. */
    void started(ClientCore c) {
    }

    /**
     * The connection {@code failed} refused the call at once with {@code error}. When this returns
     * another connection, {@code failed} is done with and the caller holds the one returned; when it
     * throws, the caller still holds {@code failed}.
     *
     * @param attempt how many attempts failed so far, from 1
     * @return the connection to try next
     * @throws RpcException {@code error} when the call fails for good (the default)
     */
    ClientCore retry(ClientCore failed, RpcException error, int attempt) {
        throw error;
    }

    /** @return true when every thread may access {@code segment} (it is not confined to one) */
    static boolean anyThreadMayAccess(MemorySegment segment) {
        return segment.isAccessibleBy(NOT_THE_OWNER);
    }

    @Override
    public final <Q, R> R call(Method<Q, R> method, Q request, CallOptions options) {
        return start(method, request, options, CallKind.CALL).await();
    }

    @Override
    public final <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options) {
        return start(method, request, options, CallKind.EXCHANGE).await();
    }

    @Override
    public final <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options) {
        return start(method, request, options, CallKind.CALL_ASYNC).future();
    }

    @Override
    public final <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options) {
        return start(method, request, options, CallKind.EXCHANGE_ASYNC).future();
    }

    @Override
    public final boolean send(Method<?, ?> method, MemorySegment payload, MemorySegment attachment, long timeoutNanos,
                              ResponseListener listener, long tag) {
        return send(method, payload, Metadata.EMPTY, attachment, timeoutNanos, listener, tag, false);
    }

    @Override
    public final boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                              long timeoutNanos, ResponseListener listener, long tag) {
        return send(method, payload, Objects.requireNonNull(metadata, "metadata"), attachment, timeoutNanos, listener, tag,
                false);
    }

    @Override
    public final boolean sendInPlace(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        if (!anyThreadMayAccess(payload)) {
            throw new IllegalArgumentException("sendInPlace needs a payload every thread may access (heap, or a global,"
                    + " automatic or shared arena's): the connection's I/O thread writes it from there, and this one is"
                    + " confined to its arena's thread; use send, which copies it on the calling thread");
        }
        return send(method, payload, Metadata.EMPTY, MemorySegment.NULL, 0, listener, tag, true);
    }

    private boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                         long timeoutNanos, ResponseListener listener, long tag, boolean inPlace) {
        ClientCore c = pick();
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return inPlace ? c.sendInPlace(method, payload, timeoutNanos, listener, tag)
                            : c.send(method, payload, metadata, attachment, timeoutNanos, listener, tag);
                } catch (RpcException e) {
                    c = retry(c, e, attempt);
                }
            }
        } finally {
            started(c);
        }
    }

    @Override
    public final <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, CallOptions options) {
        Objects.requireNonNull(method, "method");
        if (options.attachment().length() != 0 || options.responseAttachment() != null) {
            throw new IllegalArgumentException("a stream carries no attachments: its messages are its codecs' bytes");
        }
        ClientCore c = pick();
        ClientInterceptor[] interceptors = c.interceptors();
        Metadata metadata = options.metadata();
        java.util.function.BiConsumer<RpcException, Metadata> onEnd = null;
        if (interceptors.length != 0) {
            long t0 = System.nanoTime();
            try {
                for (ClientInterceptor i : interceptors) {
                    metadata = Objects.requireNonNull(i.beforeCall(method, metadata), "a client interceptor returned null metadata");
                }
            } catch (RuntimeException e) {
                started(c);
                RpcException failure = e instanceof RpcException re ? re
                        : new RpcException(Status.HANDLER_FAILED, "client interceptor failed: " + e, e);
                afterCall(interceptors, method, failure.status(), failure.metadata(), t0);
                throw failure;
            }
            java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
            onEnd = (failure, md) -> {
                if (told.compareAndSet(false, true)) {
                    afterCall(interceptors, method, failure == null ? Status.OK : failure.status(), md, t0);
                }
            };
        }
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return c.openStream(method, options.timeoutNanos(), metadata, onEnd);
                } catch (RpcException e) {
                    c = retry(c, e, attempt);
                }
            }
        } catch (RpcException e) {
            if (onEnd != null) {
                onEnd.accept(e, e.metadata()); // it never opened
            }
            throw e;
        } finally {
            started(c);
        }
    }

    private <Q, R> ClientCore.PendingCall start(Method<Q, R> method, Q request, CallOptions options, CallKind kind) {
        ClientCore c = pick();
        ClientInterceptor[] interceptors = c.interceptors();
        if (interceptors.length != 0) {
            return intercepted(c, interceptors, method, request, options, kind);
        }
        return start(c, method, request, options, options.metadata(), kind);
    }

    /** Starts the call on {@code c}, picked for it, or on the connection {@link #retry} gives; then {@link #started}. */
    private <Q, R> ClientCore.PendingCall start(ClientCore c, Method<Q, R> method, Q request, CallOptions options,
                                                Metadata metadata, CallKind kind) {
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return c.start(method, request, options.attachment(), options.responseAttachment(), options.timeoutNanos(),
                            kind, metadata);
                } catch (RpcException e) {
                    c = retry(c, e, attempt);
                }
            }
        } finally {
            started(c);
        }
    }

    /**
     * A typed call with the client's interceptors around it: their {@code beforeCall} in order here,
     * their {@code afterCall} in reverse once the call completes (see {@link ClientInterceptor}).
     */
    private <Q, R> ClientCore.PendingCall intercepted(ClientCore c, ClientInterceptor[] interceptors, Method<Q, R> method,
                                                      Q request, CallOptions options, CallKind kind) {
        long t0 = System.nanoTime();
        Metadata metadata = options.metadata();
        ClientCore.PendingCall call;
        try {
            try {
                for (ClientInterceptor i : interceptors) {
                    metadata = Objects.requireNonNull(i.beforeCall(method, metadata), "a client interceptor returned null metadata");
                }
            } catch (RuntimeException e) {
                started(c); // start(c, ...) gives it back otherwise
                throw e;
            }
            call = start(c, method, request, options, metadata, kind);
        } catch (RuntimeException e) {
            RpcException failure = e instanceof RpcException re ? re
                    : new RpcException(Status.HANDLER_FAILED, "client interceptor failed: " + e, e);
            afterCall(interceptors, method, failure.status(), failure.metadata(), t0);
            throw failure;
        }
        call.whenComplete((value, failure) -> {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            Status status = cause == null ? Status.OK : cause instanceof RpcException re ? re.status()
                    : cause instanceof java.util.concurrent.CancellationException ? Status.CANCELLED : Status.HANDLER_FAILED;
            Metadata md = cause == null ? call.responseMetadata()
                    : cause instanceof RpcException re ? re.metadata() : Metadata.EMPTY;
            afterCall(interceptors, method, status, md, t0);
        });
        return call;
    }

    private static void afterCall(ClientInterceptor[] interceptors, Method<?, ?> method, Status status, Metadata md, long t0) {
        long nanos = System.nanoTime() - t0;
        for (int i = interceptors.length - 1; i >= 0; i--) {
            try {
                interceptors[i].afterCall(method, status, md, nanos);
            } catch (RuntimeException e) {
                System.getLogger(AbstractChannel.class.getName()).log(System.Logger.Level.WARNING,
                        "client interceptor " + interceptors[i] + " threw in afterCall", e);
            }
        }
    }
}
