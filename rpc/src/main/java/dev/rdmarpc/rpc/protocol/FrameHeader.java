package dev.rdmarpc.rpc.protocol;

import static dev.rdmarpc.rpc.protocol.FrameDescriptor.*;

import java.lang.foreign.MemorySegment;

/**
 * Static accessors that read the header fields of a frame at an offset in a segment, without any
 * per-frame object; {@link FrameHeaderEncoder} writes them. Offsets come from {@link FrameDescriptor}.
 */
public final class FrameHeader {
    private FrameHeader() {
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

    /**
     * Reads a request's timeout field (see {@link FrameDescriptor#decodeTimeout}).
     *
     * @return the field's raw value; 0 for no deadline
     */
    public static int timeoutField(MemorySegment buf, long offset) {
        return buf.get(INT, offset + TIMEOUT_OFFSET);
    }

    /** Reads the flag bits of the frame starting at {@code offset} in {@code buf}. */
    public static int flags(MemorySegment buf, long offset) {
        return buf.get(SHORT, offset + FLAGS_OFFSET) & 0xFFFF;
    }

    /**
     * The length of the frame's metadata block, which starts its payload: 0 when the frame has no
     * {@link FrameDescriptor#FLAG_METADATA}; -1 when it has the flag but a payload too short for
     * the block's length field (nothing past the frame is read). Not validated otherwise: a
     * nonzero result must pass {@link MetadataBlock#check} before it is used.
     */
    public static int metadataLength(MemorySegment buf, long offset) {
        if ((buf.get(SHORT, offset + FLAGS_OFFSET) & FLAG_METADATA) == 0) {
            return 0;
        }
        return buf.get(INT, offset + PAYLOAD_LENGTH_OFFSET) < MetadataBlock.LENGTH_FIELD ? -1
                : buf.get(INT, offset + HEADER_LENGTH);
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
