package dev.rdmarpc.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * Per-call settings: a timeout and a request attachment. Immutable; the {@code with*} methods return
 * a copy, so a prepared instance can be shared by every call.
 * {@snippet :
 * CallOptions opts = CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)).withAttachment(Attachment.of(blob));
 * Reply<String> reply = client.exchange(ECHO, "hello", opts);
 * }
 */
public final class CallOptions {
    /** The client's default timeout and no attachment. */
    public static final CallOptions DEFAULT = new CallOptions(0, Attachment.NONE);

    private final long timeoutNanos;
    private final Attachment attachment;

    private CallOptions(long timeoutNanos, Attachment attachment) {
        this.timeoutNanos = timeoutNanos;
        this.attachment = attachment;
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
        return new CallOptions(nanos, attachment);
    }

    /**
     * @param attachment sent after the request payload (see {@link Attachment} for its lifetime)
     * @return a copy with this attachment
     */
    public CallOptions withAttachment(Attachment attachment) {
        return new CallOptions(timeoutNanos, Objects.requireNonNull(attachment, "attachment"));
    }

    /** @return the timeout in nanoseconds, or 0 for the client's default */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /** @return the request attachment, {@link Attachment#NONE} by default */
    public Attachment attachment() {
        return attachment;
    }
}
