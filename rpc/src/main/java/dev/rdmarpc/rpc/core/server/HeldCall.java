package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.DeviceAttachments;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A server call that outlives the frame it came in: a blocking one (on a virtual thread) or an
 * asynchronous one (answered when its future completes). It is its own {@link CallContext}; its
 * connection holds it by request id until it is over, so that a cancel or its deadline can stop it.
 *
 * <p>Stopping and ending race (a cancel arrives as the handler returns): both take this object's
 * lock, and the first wins. Stopped first, the call's outcome is dropped (a cancel: no response) or
 * answered DEADLINE_EXCEEDED (its deadline); ended first, a later stop does nothing.
 */
abstract class HeldCall extends ResponseSizes implements CallContext {
    private static final System.Logger LOG = System.getLogger(HeldCall.class.getName());

    final ServerConnection connection;
    final MethodRegistry.Entry entry;
    final long id;
    final int mid;
    final boolean hasDeadline;
    final long deadlineNanos;
    Attachment response = Attachment.NONE;
    /** Set on the handler's thread, read on the one that writes the response (an async call's completer). */
    private volatile Metadata responseMetadata = Metadata.EMPTY;
    // guarded by this
    private boolean over;
    private boolean expired;
    private List<Runnable> cancelListeners;
    private volatile boolean cancelled;
    /** The request's message and attachment bytes (set by whoever dispatched it); -1 when not known. */
    long requestBytes = -1;

    HeldCall(ServerConnection connection, MethodRegistry.Entry entry, long id, int mid, boolean hasDeadline,
             long deadlineNanos) {
        this.connection = connection;
        this.entry = entry;
        this.id = id;
        this.mid = mid;
        this.hasDeadline = hasDeadline;
        this.deadlineNanos = deadlineNanos;
    }

    /** Under the lock, when stopped: stop the work in progress (interrupt its thread, say). */
    abstract void interruptWork();

    /** Outside the lock, once stopped: whatever else stopping takes (answer at once, release). */
    abstract void stopped(boolean deadline);

    @Override
    public long requestBytes() {
        return requestBytes;
    }

    /**
     * The handler's thread is done with the call: the deadline it inherited is dropped, and a stop's
     * interrupt (when one came) is cleared, so that it does not reach the thread's next call.
     */
    final void leaveHandlerThread() {
        if (hasDeadline) {
            InheritedDeadline.exit();
        }
        if (end()) {
            Thread.interrupted();
        }
    }

    /**
     * A stop ended a call nothing waits on here: a deadline is answered (DEADLINE_EXCEEDED), then the
     * call leaves its connection and the interceptors hear how it ended.
     */
    final void endStopped(boolean deadline) {
        try {
            if (deadline) {
                answerExpired();
            }
        } finally {
            connection.callEnded(this);
            connection.core().afterCall(this, deadline ? Status.DEADLINE_EXCEEDED : Status.CANCELLED);
        }
    }

    /** Under the lock, when the call ends before any stop. */
    void ended() {
    }

    /**
     * Stops the call: the client cancelled it, or its deadline passed. Interrupts the work, then
     * tells the listeners; on the I/O thread (or the call's own).
     *
     * @param deadline true when its deadline passed, false when the client cancelled it
     */
    final void stop(boolean deadline) {
        List<Runnable> listeners;
        synchronized (this) {
            if (cancelled || over) {
                return;
            }
            cancelled = true;
            expired = deadline;
            interruptWork();
            listeners = cancelListeners;
            cancelListeners = null;
        }
        Counters m = connection.core().metrics;
        (deadline ? m.timeouts : m.cancelled).increment();
        stopped(deadline);
        if (listeners != null) {
            for (Runnable r : listeners) {
                runListener(r);
            }
        }
    }

    /**
     * The handler returned (or its future completed): no stop touches the call from now on.
     *
     * @return true when it had been stopped first: its outcome is not to be sent
     */
    final synchronized boolean end() {
        if (!over) {
            over = true;
            if (!cancelled) {
                ended();
            }
        }
        return cancelled;
    }

    /** @return true when the call was stopped by its deadline (not by a cancel) */
    final synchronized boolean expired() {
        return expired;
    }

    /** Answers a call stopped by its deadline. */
    final Status answerExpired() {
        return ResponseWriter.writeError(connection.writer, connection.core().metrics, id, mid, Status.DEADLINE_EXCEEDED,
                "the call's deadline passed on the server before " + entry.method().name() + " finished");
    }

    private static void runListener(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cancel listener threw", e);
        }
    }

    @Override
    public final boolean isCancelled() {
        return cancelled;
    }

    @Override
    public final void onCancel(Runnable listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (this) {
            if (!cancelled) {
                if (!over) {
                    if (cancelListeners == null) {
                        cancelListeners = new ArrayList<>(2);
                    }
                    cancelListeners.add(listener);
                }
                return;
            }
        }
        runListener(listener); // stopped already: at once, on this thread
    }

    @Override
    public final long remainingNanos() {
        return hasDeadline ? deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    @Override
    public final InetSocketAddress peer() {
        return connection.peer();
    }

    @Override
    public final javax.net.ssl.SSLSession tlsSession() {
        return connection.tlsSession();
    }

    @Override
    public final int methodId() {
        return mid;
    }

    @Override
    public final long requestId() {
        return id;
    }

    @Override
    public final String methodName() {
        return entry.method().name();
    }

    @Override
    public final void responseMetadata(Metadata metadata) {
        this.responseMetadata = Objects.requireNonNull(metadata, "metadata");
    }

    @Override
    public final Metadata responseMetadata() {
        return responseMetadata;
    }

    @Override
    public final void responseAttachment(Attachment attachment) {
        Objects.requireNonNull(attachment, "attachment");
        DeviceAttachments.validate(attachment);
        this.response = attachment;
    }
}
