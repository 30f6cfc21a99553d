package dev.rdmarpc.rpc.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Byte offsets and constants of a frame, the one unit every transport carries (protocol version 1).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |              magic 'R' 'D' 'M' 'R' (0x524D4452 LE)            |  0
 * +---------------+---------------+-------------------------------+
 * |    version    |     type      |             flags             |  4
 * +---------------+---------------+-------------------------------+
 * |                                                               |  8
 * +                      request id (64 bit)                      +
 * |                                                               | 12
 * +---------------------------------------------------------------+
 * |                     method id (32 bit)                        | 16
 * +-------------------------------+-------------------------------+
 * |  status (response) / timeout (request, 32 bit) | reserved (0)  | 20
 * +-------------------------------+-------------------------------+
 * |                  payload length (32 bit)                      | 24
 * +---------------------------------------------------------------+
 * |                attachment length (32 bit)                     | 28
 * +---------------------------------------------------------------+
 * |   payload (payload length bytes) ...                          | 32
 * +---------------------------------------------------------------+
 * |   attachment (attachment length bytes) ...                    |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>All integers are little-endian and need no alignment. The frame length is
 * {@code HEADER_LENGTH + payload length + attachment length} and must not exceed the receiver's
 * maximum frame size (at most {@link #MAX_FRAME_LENGTH_LIMIT}). In a request, bytes 20 to 23 are the
 * call's timeout: how long the client still waits, as {@link #encodeTimeout} writes it (0: no
 * deadline); in every other frame they are the status and a reserved 0. A response echoes the
 * request's id and method id. The method id is the
 * 32-bit FNV-1a hash of the method name's UTF-8 bytes ({@link #methodId(String)}); a server refuses
 * to register two names with the same id, so no handshake is needed. An error response carries a
 * nonzero status and, as payload, the error message in UTF-8.
 */
public final class FrameDescriptor {
    /** Magic number, bytes 'R','D','M','R', read as a little-endian int. */
    public static final int MAGIC = 0x524D4452;
    /** Protocol version this implementation speaks. */
    public static final int VERSION = 1;

    /** Offset of the magic (int). */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the version (unsigned byte). */
    public static final int VERSION_OFFSET = 4;
    /** Offset of the message type (unsigned byte). */
    public static final int TYPE_OFFSET = 5;
    /** Offset of the flags (unsigned short). */
    public static final int FLAGS_OFFSET = 6;
    /** Offset of the request id (long). */
    public static final int REQUEST_ID_OFFSET = 8;
    /** Offset of the method id (int). */
    public static final int METHOD_ID_OFFSET = 16;
    /** Offset of the status (unsigned short). */
    public static final int STATUS_OFFSET = 20;
    /** Offset of the reserved field (unsigned short, must be 0; a request's timeout covers it). */
    public static final int RESERVED_OFFSET = 22;
    /** Offset of a request's timeout (unsigned int, see {@link #encodeTimeout}); status and reserved in other frames. */
    public static final int TIMEOUT_OFFSET = 20;
    /** A timeout's unit bit: set, the low 31 bits count milliseconds; clear, microseconds. */
    public static final int TIMEOUT_MILLIS = 0x8000_0000;
    /** Offset of the payload length (int). */
    public static final int PAYLOAD_LENGTH_OFFSET = 24;
    /** Offset of the attachment length (int). */
    public static final int ATTACHMENT_LENGTH_OFFSET = 28;
    /** Length of the header; the payload starts here. */
    public static final int HEADER_LENGTH = 32;

    /** Message type: a request from client to server. */
    public static final int TYPE_REQUEST = 1;
    /** Message type: a response from server to client. */
    public static final int TYPE_RESPONSE = 2;
    /**
     * Message type: an RDMA connection-setup message (hello), exchanged once in each direction on the
     * TCP connection before the peers switch to RDMA; its payload is laid out by the RDMA transport's
     * {@code HelloDescriptor}. A server without RDMA closes a connection that sends one.
     */
    public static final int TYPE_RDMA_HELLO = 3;
    /**
     * Message type: a liveness probe, header only, that a client sends on a TCP connection when it
     * waits for responses and has received nothing for a while; the transport, not the RPC layer,
     * answers it at once with a {@link #TYPE_PONG} of the same request id. Its payload and attachment
     * lengths are 0.
     */
    public static final int TYPE_PING = 4;
    /** Message type: the answer to a {@link #TYPE_PING}, header only, with the ping's request id. */
    public static final int TYPE_PONG = 5;
    /**
     * Message type: the client gave up on a call, header only, with the call's request id and method
     * id. The server stops the call if it still runs (a blocking handler's thread is interrupted, its
     * {@code CallContext} reports it) and sends no response; a cancel for a call it already answered,
     * or never saw, is ignored. Needs no answer: the client freed the call's slot when it sent it.
     */
    public static final int TYPE_CANCEL = 6;
    /**
     * Message type: one message of a stream, either way, with the stream's request id and method id
     * (a stream is a call opened by a request with {@link #FLAG_STREAM}). Its payload is the message
     * encoded by the method's codec; its attachment length is 0. With {@link #FLAG_END_STREAM} it is
     * no message but the sender's half-close, and its payload is empty. Every message frame counts
     * its whole length against the receiver's stream window ({@link #TYPE_STREAM_WINDOW}).
     */
    public static final int TYPE_STREAM_MESSAGE = 7;
    /**
     * Message type: a stream window update, either way: the sender may receive {@code increment}
     * more bytes of message frames on the stream of this request id. Payload: the increment, an
     * int32 greater than 0; no attachment.
     */
    public static final int TYPE_STREAM_WINDOW = 8;
    /**
     * The highest message type this implementation knows. Types above it, up to 127, are those of
     * later versions of the protocol: {@link #check} accepts them (with any body), and a server
     * answers such a frame with an error response for its request id ({@code PROTOCOL_ERROR},
     * naming the type) and keeps the connection; a client ignores one. Types 0 and 128 to 255 are
     * invalid.
     */
    public static final int TYPE_MAX_KNOWN = TYPE_STREAM_WINDOW;

    /**
     * Flag bit 0, in a request or a response: the payload starts with a metadata block (the call's
     * key/value headers, see {@link MetadataBlock}), which the payload length counts; the codec's
     * bytes follow it. Unset, the payload is the codec's bytes alone, as before metadata existed.
     */
    public static final int FLAG_METADATA = 0x0001;

    /**
     * Flag bit 1, in a request: the request opens a stream (a streaming call), not a unary call. Its
     * payload is the metadata block alone (or empty): the messages follow as
     * {@link #TYPE_STREAM_MESSAGE} frames, and the call ends with the server's response, whose
     * status is the stream's outcome (an OK response's payload is empty).
     */
    public static final int FLAG_STREAM = 0x0002;

    /** Flag bit 2, in a {@link #TYPE_STREAM_MESSAGE}: the sender's half-close (no message; empty payload). */
    public static final int FLAG_END_STREAM = 0x0004;

    /**
     * The stream window each side starts with, in bytes of message frames (header included): a
     * sender may send while what it sent is less than what the receiver granted, so the receiver
     * holds at most its window plus one frame. A receiver that wants a larger window grants the rest
     * with a {@link #TYPE_STREAM_WINDOW} when the stream starts.
     */
    public static final int STREAM_INITIAL_WINDOW = 65_536;

    /** Bytes of a {@link #TYPE_STREAM_WINDOW} frame's payload: the increment. */
    public static final int STREAM_WINDOW_PAYLOAD = 4;

    /** Flag bits not defined (all but {@link #FLAG_METADATA}, {@link #FLAG_STREAM} and {@link #FLAG_END_STREAM}): reserved, must be 0. */
    public static final int FLAGS_RESERVED_MASK = 0xFFF8;

    /** Status of a request and of a successful response. */
    public static final int STATUS_OK = 0;

    /**
     * The request id no call uses: a response frame with it and a nonzero status is a
     * <em>connection-level error</em>, the server's reason for closing the connection (its payload the
     * message in UTF-8), sent after every response it still owes and right before it closes. The
     * client fails every call still outstanding with that status and message.
     */
    public static final long CONNECTION_REQUEST_ID = 0;

    /** The largest maximum frame size an endpoint may configure: 1 GiB. */
    public static final int MAX_FRAME_LENGTH_LIMIT = 1 << 30;
    /** Default maximum frame size: 16 MiB. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 << 20;

    /** {@link #check} result: fewer than {@link #HEADER_LENGTH} bytes were given. */
    public static final int INCOMPLETE_HEADER = -1;
    /** {@link #check} result: the magic is wrong. */
    public static final int BAD_MAGIC = -2;
    /** {@link #check} result: the version is not {@link #VERSION}. */
    public static final int BAD_VERSION = -3;
    /** {@link #check} result: the type is not a known message type. */
    public static final int BAD_TYPE = -4;
    /** {@link #check} result: a reserved flag bit or the reserved field is set. */
    public static final int BAD_RESERVED = -5;
    /** {@link #check} result: a length is negative. */
    public static final int BAD_LENGTH = -6;
    /** {@link #check} result: the frame is longer than the receiver's maximum. */
    public static final int TOO_LONG = -7;
    /**
     * A former {@link #check} result (a request with a nonzero status), no longer returned: a
     * request's status field is its timeout now.
     */
    public static final int BAD_STATUS = -8;

    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;

    private FrameDescriptor() {
    }

    /**
     * Validates the header at {@code offset} and computes the frame's length. Transports call this on
     * every header they receive; a negative result means the connection must be closed.
     *
     * @param buf            memory holding at least {@code available} bytes from {@code offset}
     * @param offset         where the header starts
     * @param available      bytes readable from {@code offset}
     * @param maxFrameLength the receiver's maximum frame length
     * @return the frame length (header, payload and attachment), or a negative code:
     *         {@link #INCOMPLETE_HEADER} (read more), or one of the {@code BAD_*}/{@link #TOO_LONG}
     *         codes (a protocol error, see {@link #describe(int)})
     */
    public static long check(MemorySegment buf, long offset, long available, int maxFrameLength) {
        if (available < HEADER_LENGTH) {
            // Reject a wrong magic as early as its four bytes are here.
            if (available >= 4 && buf.get(INT, offset + MAGIC_OFFSET) != MAGIC) {
                return BAD_MAGIC;
            }
            return INCOMPLETE_HEADER;
        }
        if (buf.get(INT, offset + MAGIC_OFFSET) != MAGIC) {
            return BAD_MAGIC;
        }
        if (buf.get(BYTE, offset + VERSION_OFFSET) != VERSION) {
            return BAD_VERSION;
        }
        int type = buf.get(BYTE, offset + TYPE_OFFSET);
        if (type < TYPE_REQUEST) { // 0, or 128-255 (a signed byte)
            return BAD_TYPE;
        }
        if ((buf.get(SHORT, offset + FLAGS_OFFSET) & FLAGS_RESERVED_MASK) != 0
                || type != TYPE_REQUEST && buf.get(SHORT, offset + RESERVED_OFFSET) != 0) {
            return BAD_RESERVED;
        }
        int payload = buf.get(INT, offset + PAYLOAD_LENGTH_OFFSET);
        int attachment = buf.get(INT, offset + ATTACHMENT_LENGTH_OFFSET);
        if (payload < 0 || attachment < 0
                || (type == TYPE_PING || type == TYPE_PONG || type == TYPE_CANCEL) && (payload | attachment) != 0
                || type == TYPE_STREAM_WINDOW && (payload != STREAM_WINDOW_PAYLOAD || attachment != 0)
                || type == TYPE_STREAM_MESSAGE && attachment != 0) {
            return BAD_LENGTH;
        }
        long length = (long) HEADER_LENGTH + payload + attachment;
        if (length > maxFrameLength) {
            return TOO_LONG;
        }
        return length;
    }

    /**
     * Encodes how long a client still waits for a call, for a request's timeout field: microseconds
     * up to 2<sup>31</sup> - 1 (about 35 minutes), milliseconds with {@link #TIMEOUT_MILLIS} set above
     * that (up to about 24 days; longer waits are sent as that); at least 1 microsecond.
     *
     * @param remainingNanos the time left, in nanoseconds; {@link Long#MAX_VALUE} for no deadline
     * @return the field's value; 0 for no deadline
     */
    public static int encodeTimeout(long remainingNanos) {
        if (remainingNanos == Long.MAX_VALUE) {
            return 0;
        }
        long micros = Math.max(1, (remainingNanos + 999) / 1000);
        if (micros <= Integer.MAX_VALUE) {
            return (int) micros;
        }
        return TIMEOUT_MILLIS | (int) Math.min((micros + 999) / 1000, Integer.MAX_VALUE);
    }

    /**
     * @param field a request's timeout field
     * @return the time it says, in nanoseconds; {@link Long#MAX_VALUE} for no deadline (0)
     */
    public static long decodeTimeout(int field) {
        if (field == 0) {
            return Long.MAX_VALUE;
        }
        return (field & TIMEOUT_MILLIS) != 0 ? (field & Integer.MAX_VALUE) * 1_000_000L : field * 1_000L;
    }

    /**
     * @param type a frame's message type
     * @return true for a ping or a pong: the transport's own frames, answered or dropped below the RPC layer
     */
    public static boolean isLiveness(int type) {
        return type == TYPE_PING || type == TYPE_PONG;
    }

    /**
     * @param code a negative result of {@link #check}
     * @return a short human-readable reason, for logs and close causes
     */
    public static String describe(long code) {
        return switch ((int) code) {
            case (int) INCOMPLETE_HEADER -> "truncated frame header";
            case (int) BAD_MAGIC -> "wrong magic";
            case (int) BAD_VERSION -> "unsupported protocol version";
            case (int) BAD_TYPE -> "unknown message type";
            case (int) BAD_RESERVED -> "reserved flag or field set";
            case (int) BAD_LENGTH -> "negative length, or a ping, pong or cancel with a body";
            case (int) TOO_LONG -> "frame longer than the maximum frame size";
            case (int) BAD_STATUS -> "request with a nonzero status";
            default -> "invalid frame (" + code + ")";
        };
    }

    /**
     * The method id of a method name: 32-bit FNV-1a over the name's UTF-8 bytes.
     *
     * @param name the method name, not empty
     * @return its id
     */
    public static int methodId(String name) {
        byte[] utf8 = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int h = 0x811C9DC5;
        for (byte b : utf8) {
            h ^= b & 0xFF;
            h *= 0x01000193;
        }
        return h;
    }
}
