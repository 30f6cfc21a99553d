package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.internal.Segments;
import java.time.Duration;
import java.util.Objects;

/**
 * Per-call settings: a timeout, a request attachment, request metadata, and optionally the buffer
 * the response attachment lands in. Immutable; the {@code with*} methods return
 * a copy, so a prepared instance can be shared by every call.
 * {@snippet :
 * CallOptions opts = CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)).withAttachment(Attachment.of(blob));
 * Reply<String> reply = client.exchange(ECHO, "hello", opts);
 * }
 */
public final class CallOptions {
    /** The client's default timeout and no attachment. */
    public static final CallOptions DEFAULT = new CallOptions(0, Attachment.NONE, null, Metadata.EMPTY);

    /** {@link #timeoutNanos()} of a stream without a deadline. */
    static final long NO_DEADLINE = Long.MAX_VALUE;

    private final long timeoutNanos;
    private final Attachment attachment;
    private final Attachment responseAttachment;
    private final Metadata metadata;

    private CallOptions(long timeoutNanos, Attachment attachment, Attachment responseAttachment, Metadata metadata) {
        this.timeoutNanos = timeoutNanos;
        this.attachment = attachment;
        this.responseAttachment = responseAttachment;
        this.metadata = metadata;
    }

    /**
     * @param timeout how long to wait for the response, positive
     * @return a copy with this timeout
     */
    public CallOptions withTimeout(Duration timeout) {
        long nanos = timeout.toNanos();
        if (nanos <= 0) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        return new CallOptions(nanos, attachment, responseAttachment, metadata);
    }

    /**
     * A stream without a deadline of its own: it runs until it ends, is cancelled or its connection
     * closes, and its server sees no deadline (one the calling handler inherited still applies).
     * For streams only ({@link RpcChannel#openStream}); a unary call or {@code send} with it is
     * refused. A gRPC call without a deadline goes this way over the gRPC transport.
     *
     * @return a copy without a deadline
     */
    public CallOptions withoutDeadline() {
        return new CallOptions(NO_DEADLINE, attachment, responseAttachment, metadata);
    }

    /**
     * @param attachment sent after the request payload (see {@link Attachment} for its lifetime)
     * @return a copy with this attachment
     */
    public CallOptions withAttachment(Attachment attachment) {
        return new CallOptions(timeoutNanos, Objects.requireNonNull(attachment, "attachment"), responseAttachment, metadata);
    }

    /** @return the timeout in nanoseconds, 0 for the client's default, {@link Long#MAX_VALUE} for none ({@link #withoutDeadline}) */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /** @return the request attachment, {@link Attachment#NONE} by default */
    public Attachment attachment() {
        return attachment;
    }

    /**
     * Provides the memory the response attachment lands in, host or device: the received bytes are
     * copied there (to a GPU through its {@link DeviceStaging}; {@link RpcMetrics#responseAttachmentBytesCopied()}
     * counts them) before the call completes, and the
     * {@link Reply#attachment()} is the prefix of {@code target} that they filled. A response whose
     * attachment is longer than {@code target} fails the call with {@link Status#PAYLOAD_TOO_LARGE}.
     * Without a target the response attachment is copied to the Java heap. {@code target} must not be
     * used by anyone else until the call completes, and host memory must be accessible from any thread
     * (the connection's I/O thread copies into it), so not from a confined arena.
     *
     * <p>Over RDMA with rendezvous ({@code SendSettings#rendezvousThreshold}), a response at or over
     * the threshold whose attachment fits a host target inside memory registered with the client's
     * transport ({@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#register}) is not copied at all:
     * the NIC writes the attachment into {@code target} ({@code RdmaMetrics#rendezvousBytesLanded}
     * counts it); so is a device target in GPU memory registered through the transport's
     * {@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#nicRegistrar} (never run on a GPU: see
     * docs/rdma.md). Once the transport started writing {@code target} (the NIC, or a copy) the call
     * ends with that response: a cancel then returns false and the deadline waits for it, so nothing
     * writes {@code target} after the call completed (a connection that fails meanwhile fails the
     * call with {@link Status#CONNECTION_CLOSED} once its queue pair is destroyed). The whole
     * contract (ownership, reuse, a target too small, cancel, TCP) is in {@link RpcChannel}'s
     * description.
     * {@snippet :
     * CallOptions opts = CallOptions.DEFAULT
     *         .withAttachment(staging.attachment(requestOnGpu))
     *         .withResponseAttachment(staging.attachment(responseOnGpu));
     * Reply<String> reply = client.exchange(INFER, "batch-7", opts); // reply.attachment(): GPU memory
     * }
     *
     * @param target where the response attachment goes
     * @return a copy with this target
     */
    public CallOptions withResponseAttachment(Attachment target) {
        Objects.requireNonNull(target, "target");
        if (target.isEmpty()) {
            throw new IllegalArgumentException("the response attachment target is empty");
        }
        if (target.location() == Attachment.Location.HOST && !Segments.anyThreadMayAccess(target.segment())) {
            throw new IllegalArgumentException("the response attachment target must be memory any thread may"
                    + " access (not from a confined arena): the connection's I/O thread copies into it");
        }
        return new CallOptions(timeoutNanos, attachment, target, metadata);
    }

    /**
     * Metadata sent with the request (the server reads it from {@link CallContext#requestMetadata()}),
     * after the client's interceptors added theirs. Its {@link Metadata#encodedLength()} must be
     * within the client's {@code maxMetadataBytes} (default 8 KiB) or the call fails with
     * {@link Status#PAYLOAD_TOO_LARGE} without being sent.
     *
     * @param metadata the request metadata, {@link Metadata#EMPTY} for none
     * @return a copy with this metadata
     */
    public CallOptions withMetadata(Metadata metadata) {
        return new CallOptions(timeoutNanos, attachment, responseAttachment, Objects.requireNonNull(metadata, "metadata"));
    }

    /** @return the request metadata, {@link Metadata#EMPTY} by default */
    public Metadata metadata() {
        return metadata;
    }

    /** @return the memory the response attachment lands in, or null (then it is copied to the heap) */
    public Attachment responseAttachment() {
        return responseAttachment;
    }
}
