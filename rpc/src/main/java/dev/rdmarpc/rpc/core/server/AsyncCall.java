package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.AsyncHandler;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A call of an {@link AsyncHandler}: the handler runs on the I/O thread and returns a future; the
 * response is written when it completes, on the completing thread. A stop cancels the future and,
 * for a deadline, answers DEADLINE_EXCEEDED at once.
 */
final class AsyncCall extends HeldCall {
    /** The request's attachment while the handler runs (a view of the receive buffer); null after. */
    private MemorySegment requestAttachment;
    private volatile CompletableFuture<?> future;
    private final Metadata requestMetadata;

    AsyncCall(ServerConnection connection, MethodRegistry.Entry entry, long id, int mid, boolean hasDeadline,
              long deadlineNanos, Metadata requestMetadata) {
        super(connection, entry, id, mid, hasDeadline, deadlineNanos);
        this.requestMetadata = requestMetadata;
    }

    @Override
    public Metadata requestMetadata() {
        return requestMetadata;
    }

    /** Runs the handler (on the I/O thread) and waits for its future. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void start(Object request, MemorySegment attachment) {
        requestAttachment = attachment;
        CompletableFuture<?> f;
        if (hasDeadline) {
            InheritedDeadline.enter(deadlineNanos);
        }
        try {
            Throwable refused = connection.core().beforeCall(this);
            f = refused != null ? CompletableFuture.failedFuture(refused) : ((AsyncHandler) entry.async()).handle(this, request);
            if (f == null) {
                f = CompletableFuture.failedFuture(new NullPointerException(
                        "the async handler of " + entry.method().name() + " returned no future"));
            }
        } catch (Throwable t) {
            f = CompletableFuture.failedFuture(t);
        } finally {
            if (hasDeadline) {
                InheritedDeadline.exit();
            }
            requestAttachment = null;
        }
        future = f;
        if (isCancelled()) {
            f.cancel(true); // stopped while the handler ran (a listener, or the handler itself, asked for it)
        }
        f.whenComplete(this::completed);
    }

    private void completed(Object value, Throwable failure) {
        if (end()) {
            return; // stopped first: answered (or not) then
        }
        ServerCore core = connection.core();
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        Status status = Status.HANDLER_FAILED;
        try {
            status = cause != null
                    ? ResponseWriter.writeFailure(connection.writer, core, id, mid, cause, responseMetadata())
                    : ResponseWriter.writeValue(connection.writer, core, id, mid, entry.method().responseCodec(), value,
                            response, responseMetadata(), this);
        } finally {
            connection.callEnded(this);
            core.afterCall(this, status);
        }
    }

    @Override
    void interruptWork() {
        // nothing runs: the future is cancelled once the lock is let go (its dependants may run then)
    }

    @Override
    void stopped(boolean deadline) {
        endStopped(deadline);
        CompletableFuture<?> f = future;
        if (f != null) {
            f.cancel(true);
        }
    }

    @Override
    public Attachment requestAttachment() {
        MemorySegment a = requestAttachment;
        if (a == null && future != null) {
            throw new IllegalStateException("the request attachment is valid only until the async handler returns");
        }
        return a == null || a.byteSize() == 0 ? Attachment.NONE : Attachment.of(a);
    }
}
