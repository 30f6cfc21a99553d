package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.DeviceAttachments;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A typed call in flight: a future that decodes its own response. */
public final class PendingCall extends CompletableFuture<Object> {
    /** {@link #target}: nothing writes the response target yet; a cancel may end the call. */
    private static final int OPEN = 0;
    /** {@link #target}: the response attachment is being written into the target; the call ends with it. */
    private static final int LANDING = 1;
    /** {@link #target}: a cancel ended the call before anything wrote its target; nothing will. */
    private static final int ENDED = 2;
    private static final VarHandle TARGET;

    static {
        try {
            TARGET = MethodHandles.lookup().findVarHandle(PendingCall.class, "target", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ClientCore core;
    private final Method<?, ?> method;
    private final boolean reply;
    private final Attachment responseTarget;
    private final long timeoutNanos;
    /** The call's request id once it holds a slot; 0 before (or when it never got one). */
    volatile long id;
    /** The successful response's metadata, set before the call completes. */
    private volatile Metadata responseMetadata = Metadata.EMPTY;
    /** The request's message and attachment bytes, set once it is written; -1 before. */
    private volatile long requestBytes = -1;
    /** The response's message and attachment bytes, set before the call completes with it; -1 before. */
    private volatile long responseBytes = -1;
    /** Who has the response target: {@link #OPEN}, {@link #LANDING} or {@link #ENDED}. */
    @SuppressWarnings("unused") // through TARGET
    private volatile int target;

    PendingCall(ClientCore core, Method<?, ?> method, boolean reply, Attachment responseTarget, long timeoutNanos) {
        this.core = core;
        this.method = method;
        this.reply = reply;
        this.responseTarget = responseTarget;
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * Waits for the outcome: the call's own deadline is enforced by the I/O thread's tick; the
     * wait's limit (the call's timeout and 2 s) only guards against a stuck I/O thread.
     *
     * @param <R> what the call completes with: the response value, or a {@link Reply}
     * @return the outcome
     * @throws RpcException with the status of the failure
     */
    public <R> R await() {
        try {
            @SuppressWarnings("unchecked")
            R r = (R) get(timeoutNanos + TimeUnit.SECONDS.toNanos(2), TimeUnit.NANOSECONDS);
            return r;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RpcException re) {
                throw new RpcException(re.status(), re.getMessage(), re).withMetadata(re.metadata());
            }
            if (c instanceof RuntimeException rt) {
                throw rt;
            }
            throw new RpcException(Status.PROTOCOL_ERROR, String.valueOf(c), c);
        } catch (CancellationException e) {
            throw new RpcException(Status.CANCELLED, "call cancelled", e);
        } catch (InterruptedException e) {
            if (!cancel(true) && !isDone()) {
                // the response is being written into the target: the call ends with it, soon
                R r = awaitLanded();
                Thread.currentThread().interrupt();
                return r;
            }
            Thread.currentThread().interrupt();
            throw new RpcException(Status.CANCELLED, "interrupted while waiting for the response");
        } catch (TimeoutException e) {
            throw new RpcException(Status.DEADLINE_EXCEEDED, "no response (I/O thread unresponsive)");
        }
    }

    /** The rest of {@link #await} after an interrupt that came while the response was landing. */
    private <R> R awaitLanded() {
        try {
            @SuppressWarnings("unchecked")
            R r = (R) join();
            return r;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof RpcException re) {
                throw new RpcException(re.status(), re.getMessage(), re).withMetadata(re.metadata());
            }
            throw c instanceof RuntimeException rt ? rt : new RpcException(Status.PROTOCOL_ERROR, String.valueOf(c), c);
        }
    }

    /**
     * Cancels the call, if it has not completed and its response attachment is not being written
     * into its target: it completes with a {@link CancellationException} at once (a blocking
     * {@link #await} throws {@link RpcException} with {@link Status#CANCELLED}), its slot on the
     * connection is free again, and the server is sent a cancel: a blocking handler still running is
     * interrupted and its result dropped. A response that arrives after is discarded, and nothing
     * writes the call's response target any more.
     *
     * <p>Once the response's attachment is being written into the call's response target (by the
     * NIC, or copied), a cancel does nothing: the call completes with that response once the
     * attachment is in place (or fails when the connection closes first, after the NIC stopped), so
     * the target is never written after the call completed.
     *
     * @param mayInterruptIfRunning ignored: the server is always told
     * @return true when the call is cancelled (by this cancel or an earlier one), false when it
     *         had completed already, or its response attachment is being written into its target
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (responseTarget != null && !TARGET.compareAndSet(this, OPEN, ENDED) && (int) TARGET.getVolatile(this) == LANDING) {
            return isCancelled();
        }
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        long callId = id;
        if (cancelled && callId > 0) {
            core.cancel(callId);
        }
        return cancelled;
    }

    Method<?, ?> method() {
        return method;
    }

    /** @return where the response attachment goes, or null for a heap copy */
    Attachment responseTarget() {
        return responseTarget;
    }

    /** @return the metadata of the call's successful response; {@link Metadata#EMPTY} before, or when none */
    public Metadata responseMetadata() {
        return responseMetadata;
    }

    /** @return bytes of the request's message and attachment once it was written; -1 before, or when it was not */
    public long requestBytes() {
        return requestBytes;
    }

    void requestBytes(long bytes) {
        requestBytes = bytes;
    }

    /** @return bytes of the response's message and attachment once one came; -1 before, or when none */
    public long responseBytes() {
        return responseBytes;
    }

    /**
     * @param <T> what the call completes with: the response value, or a {@link Reply}
     * @return this call as the future its caller sees
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T> CompletableFuture<T> future() {
        return (CompletableFuture) this;
    }

    /**
     * The response's attachment starts being written into {@link #responseTarget} (by the NIC, or a
     * copy): from now on a cancel or the call's deadline does not end the call; its response, or the
     * connection's close, does.
     *
     * @return false when the call was cancelled first: nothing may write its target
     */
    boolean startLanding() {
        return TARGET.compareAndSet(this, OPEN, LANDING);
    }

    /** @return true while (or once) the response's attachment is written into the target */
    boolean landing() {
        return (int) TARGET.getVolatile(this) == LANDING;
    }

    /** @param landed whether the attachment is in {@link #responseTarget} already (only the rest is in {@code buf}) */
    void completeFrom(MemorySegment buf, long offset, Counters metrics, boolean landed) {
        int mlen = FrameHeader.metadataLength(buf, offset); // checked by the caller
        int plen = FrameHeader.payloadLength(buf, offset) - mlen;
        int alen = FrameHeader.attachmentLength(buf, offset);
        long poff = offset + FrameDescriptor.HEADER_LENGTH + mlen;
        Metadata md = mlen == 0 ? Metadata.EMPTY : Metadata.readFrom(buf, offset + FrameDescriptor.HEADER_LENGTH);
        responseMetadata = md;
        responseBytes = (long) plen + alen;
        Codec<?> codec = method.responseCodec();
        Object value;
        try {
            value = StreamMessages.decodeOwned(codec, buf, poff, plen);
        } catch (RuntimeException e) {
            metrics.errors.increment();
            completeExceptionally(new RpcException(Status.PROTOCOL_ERROR,
                    "response of " + method.name() + " could not be decoded: " + e.getMessage(), e));
            return;
        }
        Attachment att = Attachment.NONE;
        if (alen > 0 && responseTarget != null) {
            if (alen > responseTarget.length()) {
                metrics.errors.increment();
                completeExceptionally(new RpcException(Status.PAYLOAD_TOO_LARGE, "response attachment of " + alen
                        + " bytes does not fit the provided " + responseTarget));
                return;
            }
            if (!landed && !startLanding() && !landing()) {
                return; // cancelled: the target is the caller's again, nothing writes it
            }
            if (!landed) {
                metrics.responseAttachmentBytesCopied.add(alen);
            }
            try {
                att = landed ? responseTarget.prefix(alen) : DeviceAttachments.land(buf, poff + plen, alen, responseTarget);
            } catch (RuntimeException e) { // a driver failure copying to the GPU: the caller sees it as is
                metrics.errors.increment();
                completeExceptionally(e);
                return;
            }
        } else if (alen > 0 && reply) {
            metrics.responseAttachmentBytesCopied.add(alen);
            MemorySegment copy = MemorySegment.ofArray(new byte[alen]);
            MemorySegment.copy(buf, poff + plen, copy, 0, alen);
            att = Attachment.of(copy);
        }
        if (reply) {
            complete(new Reply<>(value, att, md));
        } else {
            complete(value);
        }
    }
}
