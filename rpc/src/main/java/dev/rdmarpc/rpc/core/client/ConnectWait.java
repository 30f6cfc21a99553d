package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * An asynchronous call that waits for its channel's connection to open: it is returned to the caller
 * at once and starts on the connection once it is open, with what is left of its deadline; when the
 * deadline comes first it fails with {@link Status#DEADLINE_EXCEEDED} (the connection goes on opening
 * for later calls), and when opening fails it fails with why. Cancelling it before it started stops
 * it from starting; after, cancels the call it started.
 */
final class ConnectWait extends CompletableFuture<Object> {
    private final AbstractChannel channel;
    private final Method<?, ?> method;
    private final Object request;
    private final CallOptions options;
    private final Metadata metadata;
    private final CallKind kind;
    private final long deadline;
    /** How often it looked for a connection and found none open nor being opened. */
    private int misses;
    /** The call once started; guarded by this. */
    private PendingCall started;

    ConnectWait(AbstractChannel channel, Method<?, ?> method, Object request, CallOptions options, Metadata metadata,
                CallKind kind, long deadline) {
        this.channel = channel;
        this.method = method;
        this.request = request;
        this.options = options;
        this.metadata = metadata;
        this.kind = kind;
        this.deadline = deadline;
    }

    /** @return this, waiting for the connection (its deadline scheduled) */
    ConnectWait begin() {
        long left = AbstractChannel.remaining(deadline, method);
        try {
            channel.timer().schedule(this::expire, left, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            completeExceptionally(new RpcException(Status.CONNECTION_CLOSED, "client pool is closed"));
            return this;
        }
        waitForConnection();
        return this;
    }

    private void waitForConnection() {
        CompletableFuture<Void> opening;
        try {
            opening = channel.whenConnected();
        } catch (RpcException e) {
            completeExceptionally(e);
            return;
        }
        if (opening == null) { // opened or failed meanwhile: look again
            if (++misses > 8) {
                completeExceptionally(new RpcException(Status.UNAVAILABLE, method.name() + ": no connection could be opened"));
                return;
            }
            opening = CompletableFuture.completedFuture(null);
        }
        opening.whenComplete((v, failure) -> connected(failure));
    }

    /** The connection being opened is open, or failed with {@code failure}. */
    private void connected(Throwable failure) {
        if (isDone()) {
            return;
        }
        ClientCore c;
        try {
            c = channel.pickNow();
        } catch (RpcException e) {
            completeExceptionally(e);
            return;
        }
        if (c == null) {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                completeExceptionally(cause);
            } else {
                waitForConnection();
            }
            return;
        }
        startOn(c);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void startOn(ClientCore c) {
        PendingCall call;
        synchronized (this) {
            if (isDone()) {
                channel.started(c);
                return;
            }
            try {
                call = channel.start(c, (Method) method, request, options, metadata, kind, deadline);
            } catch (RuntimeException e) {
                completeExceptionally(e);
                return;
            }
            started = call;
        }
        call.whenComplete((value, failure) -> {
            if (failure != null) {
                completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
            } else {
                complete(value);
            }
        });
    }

    /** The deadline came: fails the call unless it started (then its own deadline ends it). */
    private void expire() {
        synchronized (this) {
            if (started != null || isDone()) {
                return;
            }
        }
        completeExceptionally(new RpcException(Status.DEADLINE_EXCEEDED, method.name()
                + ": the call's deadline passed while its connection was being opened"));
    }

    /**
     * Cancels the call: before it started, it never starts; after, the call it started is cancelled
     * (the server is told).
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        PendingCall call;
        synchronized (this) {
            call = started;
        }
        if (cancelled && call != null) {
            call.cancel(mayInterruptIfRunning);
        }
        return cancelled;
    }

    /** @return the metadata of the call's successful response, {@link Metadata#EMPTY} before or when none */
    Metadata responseMetadata() {
        PendingCall call;
        synchronized (this) {
            call = started;
        }
        return call == null ? Metadata.EMPTY : call.responseMetadata();
    }

    /** @return the call as started on a connection, or null before (or when it never started) */
    synchronized PendingCall started() {
        return started;
    }
}
