package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.core.MetadataLimits;

/**
 * What a client call or stream is checked against before it takes a slot: the metadata and frame
 * limits, and the deadline of the call the current thread's handler serves; and the errors a call
 * refused for the connection's state fails with. Each refusal is counted as an error.
 */
final class CallLimits {
    private final Counters metrics;
    private final int maxFrameLength;
    /** Most bytes of metadata a frame may carry, either way. */
    private final int maxMetadataBytes;

    CallLimits(Counters metrics, int maxFrameLength, int maxMetadataBytes) {
        this.metrics = metrics;
        this.maxFrameLength = maxFrameLength;
        this.maxMetadataBytes = maxMetadataBytes;
    }

    /** @throws RpcException PAYLOAD_TOO_LARGE when the request's metadata is over the limit */
    void checkMetadata(Metadata metadata) {
        if (metadata.encodedLength() > maxMetadataBytes) {
            metrics.errors.increment();
            throw new RpcException(Status.PAYLOAD_TOO_LARGE,
                    MetadataLimits.overLimit("request", metadata.encodedLength(), "client", maxMetadataBytes));
        }
    }

    /** @throws RpcException PAYLOAD_TOO_LARGE when a request frame of {@code frame} bytes is over the limit */
    void checkFrame(long frame) {
        if (frame > maxFrameLength) {
            metrics.errors.increment();
            throw new RpcException(Status.PAYLOAD_TOO_LARGE,
                    "request frame of " + frame + " bytes exceeds the maximum frame length " + maxFrameLength);
        }
    }

    /**
     * A call made from inside a handler (on its thread) waits no longer than the call that handler
     * serves: its deadline travels on.
     *
     * @return {@code timeout}, or the time left to the served call's deadline when that is shorter
     * @throws RpcException DEADLINE_EXCEEDED when that deadline has passed: the call is not sent
     */
    long inheritTimeout(long timeout) {
        long inherited = InheritedDeadline.remainingNanos();
        if (inherited >= timeout) {
            return timeout;
        }
        if (inherited <= 0) {
            metrics.errors.increment();
            throw new RpcException(Status.DEADLINE_EXCEEDED, "the deadline of the call this one is made for has passed");
        }
        return inherited;
    }

    /** @return what a call fails with when no slot is free (in time) */
    static RpcException overloaded() {
        return new RpcException(Status.OVERLOADED, "too many calls outstanding on the connection");
    }

    /** @return what a call fails with when the buffer pool has no send buffer */
    static RpcException noSendBuffer() {
        return new RpcException(Status.RESOURCE_EXHAUSTED, "buffer pool exhausted: no send buffer");
    }
}
