package dev.rdmarpc.rpc.protocol;

import static dev.rdmarpc.rpc.protocol.FrameDescriptor.*;

import java.lang.foreign.MemorySegment;

/**
 * Static accessors for the header fields of a frame at an offset in a segment: the encoder and the
 * decoder in one, without any per-frame object. Offsets come from {@link FrameDescriptor}.
 */
public final class FrameHeader {
    private FrameHeader() {
    }

    /**
     * Writes a complete header.
     *
     * @param buf              destination
     * @param offset           where the frame starts
     * @param type             {@link FrameDescriptor#TYPE_REQUEST} or {@link FrameDescriptor#TYPE_RESPONSE}
     * @param requestId        request id
     * @param methodId         method id
     * @param status           status code (0 for requests)
     * @param payloadLength    payload bytes following the header
     * @param attachmentLength attachment bytes following the payload
     */
    public static void write(MemorySegment buf, long offset, int type, long requestId, int methodId, int status,
                             int payloadLength, int attachmentLength) {
        buf.set(INT, offset + MAGIC_OFFSET, MAGIC);
        buf.set(BYTE, offset + VERSION_OFFSET, (byte) VERSION);
        buf.set(BYTE, offset + TYPE_OFFSET, (byte) type);
        buf.set(SHORT, offset + FLAGS_OFFSET, (short) 0);
        buf.set(LONG, offset + REQUEST_ID_OFFSET, requestId);
        buf.set(INT, offset + METHOD_ID_OFFSET, methodId);
        buf.set(SHORT, offset + STATUS_OFFSET, (short) status);
        buf.set(SHORT, offset + RESERVED_OFFSET, (short) 0);
        buf.set(INT, offset + PAYLOAD_LENGTH_OFFSET, payloadLength);
        buf.set(INT, offset + ATTACHMENT_LENGTH_OFFSET, attachmentLength);
    }

    /** Reads the message type of the frame starting at {@code offset} in {@code buf}. */
    public static int type(MemorySegment buf, long offset) {
        return buf.get(BYTE, offset + TYPE_OFFSET) & 0xFF;
    }

    /** Reads the request id of the frame starting at {@code offset} in {@code buf}. */
    public static long requestId(MemorySegment buf, long offset) {
        return buf.get(LONG, offset + REQUEST_ID_OFFSET);
    }

    /** Reads the method id of the frame starting at {@code offset} in {@code buf}. */
    public static int methodId(MemorySegment buf, long offset) {
        return buf.get(INT, offset + METHOD_ID_OFFSET);
    }

    /** Reads the status code of the frame starting at {@code offset} in {@code buf}. */
    public static int status(MemorySegment buf, long offset) {
        return buf.get(SHORT, offset + STATUS_OFFSET) & 0xFFFF;
    }

    /** Reads the payload length of the frame starting at {@code offset} in {@code buf}. */
    public static int payloadLength(MemorySegment buf, long offset) {
        return buf.get(INT, offset + PAYLOAD_LENGTH_OFFSET);
    }

    /** Reads the attachment length of the frame starting at {@code offset} in {@code buf}. */
    public static int attachmentLength(MemorySegment buf, long offset) {
        return buf.get(INT, offset + ATTACHMENT_LENGTH_OFFSET);
    }

    /** Overwrites the request id of the frame starting at {@code offset} in {@code buf}. */
    public static void requestId(MemorySegment buf, long offset, long requestId) {
        buf.set(LONG, offset + REQUEST_ID_OFFSET, requestId);
    }
}
