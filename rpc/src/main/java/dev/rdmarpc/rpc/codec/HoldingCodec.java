package dev.rdmarpc.rpc.codec;

import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;

/**
 * A codec whose values may keep a stream message where it arrived, in the transport's receive buffer,
 * instead of copying it out: it decodes with the connection at hand and may take the frame with
 * {@link Connection#holdFrame}. A value holding a frame implements
 * {@link dev.rdmarpc.rpc.transport.FrameHold}: the stream releases it when it drops the value unread
 * (a cancel, a failure, a peer past its window); the reader it was handed to releases it once done.
 *
 * @param <T> the type of the values
 */
public interface HoldingCodec<T> extends Codec<T> {
    /**
     * Decodes a stream message's payload, on the connection's I/O thread, inside the frame's handler.
     *
     * @param src        memory holding the payload (the receive buffer)
     * @param offset     where the payload starts
     * @param length     the payload's length
     * @param connection the connection the message came on: its {@link Connection#holdFrame} keeps the
     *                   memory past the handler, or answers null (then the value must not refer to it)
     * @return the value, never null
     */
    T decode(MemorySegment src, long offset, int length, Connection connection);
}
