package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.HoldingCodec;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;

/** What both ends of a stream do alike with its frames, and the decoding a client call's response shares. */
public final class StreamMessages {
    private StreamMessages() {
    }

    /**
     * Decodes a message frame's payload into a value that outlives the receive buffer (a view
     * codec's value gets a heap copy of its bytes: the message waits in the stream's inbox).
     */
    public static Object decode(Codec<?> codec, MemorySegment buf, long offset) {
        Object value = decodeOwned(codec, buf, offset + FrameDescriptor.HEADER_LENGTH,
                FrameHeader.payloadLength(buf, offset));
        if (value == null) {
            throw new IllegalArgumentException("the codec decoded it to null, which a stream's reader takes for its end");
        }
        return value;
    }

    /**
     * Decodes a message frame's payload as {@link #decode(Codec, MemorySegment, long)} does, except that a
     * {@link HoldingCodec}'s value may keep the payload in the receive buffer ({@link Connection#holdFrame}):
     * such a value is a {@link dev.rdmarpc.rpc.transport.FrameHold}, released by whoever drops or reads it.
     */
    public static Object decode(Codec<?> codec, MemorySegment buf, long offset, Connection connection) {
        if (!(codec instanceof HoldingCodec<?> holding)) {
            return decode(codec, buf, offset);
        }
        Object value = holding.decode(buf, offset + FrameDescriptor.HEADER_LENGTH, FrameHeader.payloadLength(buf, offset),
                connection);
        if (value == null) {
            throw new IllegalArgumentException("the codec decoded it to null, which a stream's reader takes for its end");
        }
        return value;
    }

    /** Releases {@code value} when it holds a received frame (a stream drops it unread). */
    public static void drop(Object value) {
        if (value instanceof dev.rdmarpc.rpc.transport.FrameHold h) {
            h.release();
        }
    }

    /**
     * Decodes {@code plen} bytes at {@code poff} into a value that outlives the receive buffer, which
     * is reused once the frame's handler returns: a view codec's value gets a heap copy of its bytes
     * (a stream's message or a call's response alike).
     */
    public static Object decodeOwned(Codec<?> codec, MemorySegment buf, long poff, int plen) {
        if (codec.decodesToView()) {
            MemorySegment copy = MemorySegment.ofArray(new byte[plen]);
            MemorySegment.copy(buf, poff, copy, 0, plen);
            return codec.decode(copy, 0, plen);
        }
        return codec.decode(buf, poff, plen);
    }

    /** A stream's messages are never null: {@code receive} returns null for the end. */
    public static void requireMessage(Object message) {
        if (message == null) {
            throw new NullPointerException("a stream's message must not be null (receive returns null for the end)");
        }
    }

    /** @return a window frame's increment; a value of 0 or less is the peer's protocol error */
    public static int increment(MemorySegment buf, long offset) {
        return buf.get(dev.rdmarpc.rpc.codec.Codecs.INT_LE, offset + FrameDescriptor.HEADER_LENGTH);
    }
}
