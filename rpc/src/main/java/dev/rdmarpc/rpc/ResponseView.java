package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codec;
import java.lang.foreign.MemorySegment;

/**
 * A flyweight over a received response frame, handed to {@link ResponseListener#onResponse}. Valid
 * only during that callback; the object is reused for the next response. The accessors that return
 * offsets and lengths allocate nothing; {@link #payload()} and {@link #attachment()} allocate a small
 * view object.
 */
public interface ResponseView {
    /** @return the request id of the call */
    long requestId();

    /** @return the wire id of the called method */
    int methodId();

    /** @return the memory holding the frame (do not keep it) */
    MemorySegment buffer();

    /** @return offset of the response payload in {@link #buffer()} */
    long payloadOffset();

    /** @return length of the response payload */
    int payloadLength();

    /** @return offset of the response attachment in {@link #buffer()} */
    long attachmentOffset();

    /** @return length of the response attachment (0 when none) */
    int attachmentLength();

    /**
     * The response's metadata, read in place (a view reused for every response, valid during the
     * callback); empty when the server sent none. The payload accessors never include it.
     *
     * @return the view
     */
    MetadataView metadata();

    /** @return a view of the payload, valid during the callback */
    MemorySegment payload();

    /** @return a view of the attachment (empty when none), valid during the callback */
    MemorySegment attachment();

    /**
     * @param codec the codec to decode the payload with
     * @param <T>   the value type
     * @return the decoded payload (a view codec's result is valid during the callback only)
     */
    <T> T decode(Codec<T> codec);
}
