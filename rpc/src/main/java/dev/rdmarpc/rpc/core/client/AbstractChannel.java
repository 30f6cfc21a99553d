package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.AsyncClientStream;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamListener;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.internal.Segments;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The one call-start path of every {@link RpcChannel}. Each call's deadline is fixed when the call
 * is made ({@link #deadlineOf}) and bounds everything it waits for: a connection being opened, a call
 * slot, room in the send queue, the response. A blocking call picks a connection ({@link #pick}),
 * waiting for one being opened until its deadline; an asynchronous call takes an open connection
 * ({@link #pickNow}) or, when it has to wait for one, returns at once and starts when the connection
 * is open ({@link ConnectWait}), failing with {@link Status#DEADLINE_EXCEEDED} when that comes after
 * its deadline. When the connection fails the call at once, {@link #retry} says whether to try
 * another. A client has one connection and never retries ({@link ClientChannel}); a pool's channel
 * picks the least loaded connection to its endpoint and tries once more after one closed under it
 * ({@link ClientPool}).
 */
abstract sealed class AbstractChannel implements RpcChannel permits ClientChannel, ClientPool.EndpointChannel {
    /** {@link CallOptions#timeoutNanos()} of a stream without a deadline ({@link CallOptions#withoutDeadline()}). */
    private static final long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * @param deadline the call's deadline ({@link System#nanoTime()})
     * @return the connection the next call goes to, waiting for one being opened until
     *         {@code deadline}; the caller hands it to {@link #started} once the call holds its slot
     *         there or failed to start (whichever connection it ended on)
     * @throws RpcException DEADLINE_EXCEEDED when no connection opened by {@code deadline}, or why none could
     */
    abstract ClientCore pick(long deadline);

    /**
     * @return the connection the next call goes to, as {@link #pick}, or null when the call must wait
     *         for a connection being opened ({@link #whenConnected})
     */
    abstract ClientCore pickNow();

    /**
     * @return a future completed when the connection being opened for this channel is open or failed
     *         (exceptionally, with why); null when none is being opened
     * @throws RpcException when none can be opened now (the pool is closed, a connect failed just before)
     */
    java.util.concurrent.CompletableFuture<Void> whenConnected() {
        return null;
    }

    /** @return where {@link ConnectWait} schedules a waiting call's deadline */
    java.util.concurrent.ScheduledExecutorService timer() {
        throw new IllegalStateException("this channel never waits for a connection");
    }

    /** @return the timeout of calls that set none, nanoseconds */
    abstract long defaultTimeoutNanos();

    /** @return the timeout of streams that set none, nanoseconds */
    abstract long defaultStreamTimeoutNanos();

    /** @return the client interceptors of every connection of this channel */
    abstract ClientInterceptor[] interceptors();

    /** The call {@link #pick} (or {@link #retry}) gave {@code c} to has started there, or failed to start. */
    void started(ClientCore c) {
    }

    /**
     * The connection {@code failed} refused the call at once with {@code error}. When this returns
     * another connection, {@code failed} is done with and the caller holds the one returned; when it
     * throws, the caller still holds {@code failed}.
     *
     * @param attempt  how many attempts failed so far, from 1
     * @param deadline the call's deadline
     * @param mayWait  whether the caller may wait for a connection being opened
     * @return the connection to try next
     * @throws RpcException {@code error} when the call fails for good (the default)
     */
    ClientCore retry(ClientCore failed, RpcException error, int attempt, long deadline, boolean mayWait) {
        throw error;
    }

    /**
     * The deadline of a call made now: its own timeout, or the channel's default, or the deadline of
     * the call the current thread's handler serves when that is earlier.
     *
     * @param timeoutNanos the call's timeout, 0 for the default, {@link #NO_DEADLINE} for none (streams)
     * @param stream       whether the call is a stream (its default is {@link #defaultStreamTimeoutNanos})
     * @return the deadline ({@link System#nanoTime()})
     * @throws RpcException DEADLINE_EXCEEDED when the served call's deadline has passed
     */
    final long deadlineOf(long timeoutNanos, boolean stream) {
        long now = System.nanoTime();
        if (timeoutNanos == NO_DEADLINE) {
            if (!stream) {
                throw new IllegalArgumentException("only a stream can go without a deadline (CallOptions.withoutDeadline)");
            }
            timeoutNanos = ClientCore.NO_DEADLINE_NANOS;
        }
        long timeout = timeoutNanos > 0 ? timeoutNanos : stream ? defaultStreamTimeoutNanos() : defaultTimeoutNanos();
        long inherited = ClientCore.inheritedRemainingNanos();
        if (inherited < timeout) {
            if (inherited <= 0) {
                throw new RpcException(Status.DEADLINE_EXCEEDED, "the deadline of the call this one is made for has passed");
            }
            timeout = inherited;
        }
        return now + timeout;
    }

    /**
     * @return the time left to {@code deadline}, positive
     * @throws RpcException DEADLINE_EXCEEDED when it has passed
     */
    static long remaining(long deadline, Method<?, ?> method) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new RpcException(Status.DEADLINE_EXCEEDED, method.name() + ": the call's deadline passed before it was sent");
        }
        return left;
    }

    @Override
    public final <Q, R> R call(Method<Q, R> method, Q request, CallOptions options) {
        return ((PendingCall) start(method, request, options, CallKind.CALL)).await();
    }

    @Override
    public final <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options) {
        return ((PendingCall) start(method, request, options, CallKind.EXCHANGE)).await();
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public final <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options) {
        return (CompletableFuture) start(method, request, options, CallKind.CALL_ASYNC);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public final <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options) {
        return (CompletableFuture) start(method, request, options, CallKind.EXCHANGE_ASYNC);
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
        if (!Segments.anyThreadMayAccess(payload)) {
            throw new IllegalArgumentException("sendInPlace needs a payload every thread may access (heap, or a global,"
                    + " automatic or shared arena's): the connection's I/O thread writes it from there, and this one is"
                    + " confined to its arena's thread; use send, which copies it on the calling thread");
        }
        return send(method, payload, Metadata.EMPTY, MemorySegment.NULL, 0, listener, tag, true);
    }

    private boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                         long timeoutNanos, ResponseListener listener, long tag, boolean inPlace) {
        long deadline = deadlineOf(timeoutNanos, false);
        ClientCore c = pick(deadline);
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    long left = remaining(deadline, method);
                    return inPlace ? c.sendInPlace(method, payload, left, listener, tag)
                            : c.send(method, payload, metadata, attachment, left, listener, tag);
                } catch (RpcException e) {
                    c = retry(c, e, attempt, deadline, true);
                }
            }
        } finally {
            started(c);
        }
    }

    @Override
    public final <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, CallOptions options) {
        Objects.requireNonNull(method, "method");
        long deadline = streamDeadline(options);
        ClientCore c = pick(deadline);
        ClientInterceptor[] interceptors = c.interceptors();
        Metadata metadata = options.metadata();
        StreamEnd onEnd = null;
        if (interceptors.length != 0) {
            long t0 = System.nanoTime();
            try {
                metadata = beforeStream(interceptors, method, metadata, t0);
            } catch (RpcException e) {
                started(c);
                throw e;
            }
            onEnd = streamEnd(interceptors, method, metadata, t0);
        }
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return c.openStream(method, streamTimeout(deadline, method), metadata, onEnd);
                } catch (RpcException e) {
                    c = retry(c, e, attempt, deadline, true);
                }
            }
        } catch (RpcException e) {
            throw neverOpened(onEnd, e);
        } finally {
            started(c);
        }
    }

    @Override
    public final <Q, R> AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, CallOptions options,
                                                             StreamListener<? super R> listener,
                                                             java.util.concurrent.Executor executor) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(listener, "listener");
        long deadline = streamDeadline(options);
        ClientCore c = pickNow();
        if (c == null) {
            c = pick(deadline); // a pool with no open connection yet: it waits for one
        }
        ClientInterceptor[] interceptors = c.interceptors();
        Metadata metadata = options.metadata();
        StreamEnd onEnd = null;
        try {
            if (interceptors.length != 0) {
                long t0 = System.nanoTime();
                metadata = beforeStream(interceptors, method, metadata, t0);
                onEnd = streamEnd(interceptors, method, metadata, t0);
            }
            long timeout = streamTimeout(deadline, method);
            try {
                return c.openAsyncStream(method, timeout, metadata, listener, executor, onEnd);
            } catch (RpcException e) {
                throw neverOpened(onEnd, e);
            }
        } finally {
            started(c);
        }
    }

    /**
     * Starts a typed call: a blocking one on the connection {@link #pick} gives (waiting for one being
     * opened), an asynchronous one on an open connection or, when it must wait for one, once it is
     * open ({@link ConnectWait}); the client's interceptors run around it.
     *
     * @return a {@link PendingCall} for a blocking call; for an asynchronous one, the call's future
     */
    private <Q, R> CompletableFuture<Object> start(Method<Q, R> method, Q request, CallOptions options, CallKind kind) {
        long deadline = deadlineOf(options.timeoutNanos(), false);
        ClientCore c = kind.blocking() ? pick(deadline) : pickNow();
        ClientInterceptor[] interceptors = interceptors();
        long t0 = System.nanoTime();
        Metadata metadata = options.metadata();
        CompletableFuture<Object> call;
        try {
            try {
                for (ClientInterceptor i : interceptors) {
                    metadata = Objects.requireNonNull(i.beforeCall(method, metadata), "a client interceptor returned null metadata");
                }
            } catch (RuntimeException e) {
                if (c != null) {
                    started(c); // start(c, ...) gives it back otherwise
                }
                throw e;
            }
            call = c != null ? start(c, method, request, options, metadata, kind, deadline)
                    : new ConnectWait(this, method, request, options, metadata, kind, deadline).begin();
        } catch (RuntimeException e) {
            if (interceptors.length == 0) {
                throw e;
            }
            RpcException failure = e instanceof RpcException re ? re
                    : new RpcException(Status.HANDLER_FAILED, "client interceptor failed: " + e, e);
            afterCall(interceptors, method, metadata, failure.status(), failure.metadata(), t0, -1, -1);
            throw failure;
        }
        if (interceptors.length != 0) {
            CompletableFuture<Object> f = call;
            Metadata sent = metadata;
            call.whenComplete((value, failure) -> {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                Status status = cause == null ? Status.OK : cause instanceof RpcException re ? re.status()
                        : cause instanceof java.util.concurrent.CancellationException ? Status.CANCELLED : Status.HANDLER_FAILED;
                Metadata md = cause == null ? responseMetadata(f)
                        : cause instanceof RpcException re ? re.metadata() : Metadata.EMPTY;
                PendingCall p = pendingCall(f);
                afterCall(interceptors, method, sent, status, md, t0, p == null ? -1 : p.requestBytes(),
                        p == null || cause != null ? -1 : p.responseBytes());
            });
        }
        return call;
    }

    private static Metadata responseMetadata(CompletableFuture<Object> call) {
        return call instanceof PendingCall p ? p.responseMetadata()
                : call instanceof ConnectWait w ? w.responseMetadata() : Metadata.EMPTY;
    }

    /** @return the call as started on a connection, or null when it never got that far */
    private static PendingCall pendingCall(CompletableFuture<Object> call) {
        return call instanceof PendingCall p ? p : call instanceof ConnectWait w ? w.started() : null;
    }

    /**
     * Starts the call on {@code c}, picked for it, or on the connection {@link #retry} gives; then
     * {@link #started}. What is left of the call's {@code deadline} is its timeout there.
     */
    final <Q, R> PendingCall start(ClientCore c, Method<Q, R> method, Q request, CallOptions options,
                                              Metadata metadata, CallKind kind, long deadline) {
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    return c.start(method, request, options.attachment(), options.responseAttachment(),
                            remaining(deadline, method), kind, metadata);
                } catch (RpcException e) {
                    c = retry(c, e, attempt, deadline, kind.blocking());
                }
            }
        } finally {
            started(c);
        }
    }

    /**
     * A stream's interceptors before it opens: each one's {@code beforeCall} in order, each given the
     * metadata the one before returned. One that throws ends the stream before it opens: the
     * interceptors' {@code afterCall} is told, and the failure thrown as an {@link RpcException}.
     *
     * @return the metadata to send
     */
    /**
     * @return the deadline of a stream opened with {@code options}
     * @throws IllegalArgumentException when they carry an attachment
     */
    private long streamDeadline(CallOptions options) {
        if (options.attachment().length() != 0 || options.responseAttachment() != null) {
            throw new IllegalArgumentException("a stream carries no attachments: its messages are its codecs' bytes");
        }
        return deadlineOf(options.timeoutNanos(), true);
    }

    /**
     * @return the nanoseconds a stream opened now has left until {@code deadline}, or
     *         {@link Long#MAX_VALUE} when it has no deadline of its own and none inherited: it has none
     *         then, on the wire too
     * @throws RpcException DEADLINE_EXCEEDED when the deadline has passed
     */
    private static long streamTimeout(long deadline, Method<?, ?> method) {
        long left = remaining(deadline, method);
        return left >= ClientCore.NO_DEADLINE_NANOS / 2 ? Long.MAX_VALUE : left;
    }

    /** Tells a stream's interceptors (when it has any) that it never opened; returns {@code e}, to throw. */
    private static RpcException neverOpened(StreamEnd onEnd, RpcException e) {
        if (onEnd != null) {
            onEnd.ended(e, e.metadata(), -1, -1);
        }
        return e;
    }

    private static Metadata beforeStream(ClientInterceptor[] interceptors, Method<?, ?> method, Metadata metadata,
                                         long t0) {
        try {
            for (ClientInterceptor i : interceptors) {
                metadata = Objects.requireNonNull(i.beforeCall(method, metadata), "a client interceptor returned null metadata");
            }
            return metadata;
        } catch (RuntimeException e) {
            RpcException failure = e instanceof RpcException re ? re
                    : new RpcException(Status.HANDLER_FAILED, "client interceptor failed: " + e, e);
            afterCall(interceptors, method, metadata, failure.status(), failure.metadata(), t0, -1, -1);
            throw failure;
        }
    }

    /** What tells a stream's interceptors that it ended (with the failure, or null for OK): once, however often called. */
    private static StreamEnd streamEnd(ClientInterceptor[] interceptors,
                                                                                 Method<?, ?> method, Metadata sent,
                                                                                 long t0) {
        java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
        return (failure, md, bytesSent, bytesReceived) -> {
            if (told.compareAndSet(false, true)) {
                afterCall(interceptors, method, sent, failure == null ? Status.OK : failure.status(), md, t0,
                        bytesSent, bytesReceived);
            }
        };
    }

    private static void afterCall(ClientInterceptor[] interceptors, Method<?, ?> method, Metadata sent, Status status,
                                  Metadata md, long t0, long requestBytes, long responseBytes) {
        long nanos = System.nanoTime() - t0;
        for (int i = interceptors.length - 1; i >= 0; i--) {
            try {
                interceptors[i].afterCall(method, sent, status, md, nanos, requestBytes, responseBytes);
            } catch (RuntimeException e) {
                System.getLogger(AbstractChannel.class.getName()).log(System.Logger.Level.WARNING,
                        "client interceptor " + interceptors[i] + " threw in afterCall", e);
            }
        }
    }
}
