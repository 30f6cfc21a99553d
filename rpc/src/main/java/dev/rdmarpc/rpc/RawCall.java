package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codec;
import java.lang.foreign.MemorySegment;

/**
 * The request of a {@link RawHandler} and the way to answer it: a flyweight over the received frame,
 * reused for every call on the connection, valid only until the handler returns.
 *
 * <p>The payload is {@code payloadLength()} bytes of {@link #buffer()} at {@link #payloadOffset()}
 * (the codec's bytes: a metadata block the frame starts its payload with is not part of it);
 * reading them through these accessors allocates nothing. Exactly one of the {@code respond} methods
 * must be called, once, or {@link #defer()} to answer later from another thread.
 */
public interface RawCall extends CallContext {
    /** @return the memory holding the received frame (do not keep it) */
    MemorySegment buffer();

    /** @return offset of the request payload in {@link #buffer()} */
    long payloadOffset();

    /** @return length of the request payload */
    int payloadLength();

    /** @return offset of the request attachment in {@link #buffer()} */
    long attachmentOffset();

    /** @return length of the request attachment (0 when none) */
    int attachmentLength();

    /**
     * The request's metadata read in place, allocating nothing: a view reused for every call of the
     * connection, valid until the handler returns (copy what a deferred answer needs).
     *
     * @return the view; empty when the client sent no metadata
     */
    MetadataView requestMetadataView();

    /** @return a view of the request payload (allocates a small view object) */
    MemorySegment payload();

    /**
     * Answers with {@code length} bytes of {@code src} from {@code offset}, copied straight into the
     * response frame (plus the {@link #responseAttachment response attachment}, if set).
     *
     * <p>Not copied at all over TCP when those bytes lie in this call's own request, the request
     * frame is larger than a pool chunk, the handler runs on the I/O thread and there is no response
     * attachment (an echo, or a response that forwards part of the request): the response is then
     * written from the request's receive buffer, which the connection keeps until it is sent.
     *
     * <p>If the response cannot be sent as such, the client gets an error response instead:
     * {@link Status#PAYLOAD_TOO_LARGE} when it exceeds the maximum frame length,
     * {@link Status#RESOURCE_EXHAUSTED} when no send buffer is free (and when not even that fits, the
     * connection is closed so the client learns at once).
     *
     * @param src    response bytes
     * @param offset where they start
     * @param length how many
     * @throws IllegalStateException when called twice, or after the handler returned
     */
    void respond(MemorySegment src, long offset, int length);

    /**
     * Answers with {@code value}, encoded by {@code codec} straight into the response frame.
     *
     * @param codec the response codec
     * @param value the response
     * @param <T>   response type
     * @throws IllegalStateException when called twice, or after the handler returned
     */
    <T> void respond(Codec<T> codec, T value);

    /**
     * Answers with an error status and message.
     *
     * @param status  a status that can travel on the wire ({@link Status#isWire()}), not OK
     * @param message the message the client's {@link RpcException} will carry
     */
    void respondError(Status status, String message);

    /** @return true once a {@code respond} method (or {@link #defer()}) has been called */
    boolean responded();

    /**
     * Takes the call over, to answer it later from any thread through the returned
     * {@link DeferredCall}; counts as this call's response here (a {@code respond} after it throws).
     * Copy what the answer needs from the request before the handler returns. Allocates nothing
     * once the connection has as many deferred calls pending as it ever had.
     *
     * @return the call, to answer once
     * @throws IllegalStateException when already responded, or after the handler returned
     */
    DeferredCall defer();
}
