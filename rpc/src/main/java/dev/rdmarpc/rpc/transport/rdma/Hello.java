package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The RDMA hello: the one message each side sends on the TCP connection to set up its queue pair,
 * a frame of type {@link FrameDescriptor#TYPE_RDMA_HELLO}. An accepting or requesting hello has
 * status 0 and this payload (all integers little-endian, like the frame header):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                     hello version (1)                         |  0
 * +---------------------------------------------------------------+
 * |      flags (bit 0: RENDEZVOUS; the others reserved, 0)        |  4
 * +---------------------------------------------------------------+
 * |                 queue pair number (24 bit)                    |  8
 * +---------------------------------------------------------------+
 * |            initial packet sequence number (24 bit)            | 12
 * +---------------------------------------------------------------+
 * |                                                               | 16
 * +                    GID (16 bytes, as in the GID table)        +
 * |                                                               |
 * +-------------------------------+---------------+---------------+
 * |          LID (0 on RoCE)      |  active MTU   |  reserved (0) | 32
 * +-------------------------------+---------------+---------------+
 * |               receive buffer size (bytes)                     | 36
 * +---------------------------------------------------------------+
 * |        receive buffers posted = initial credits for the peer  | 40
 * +---------------------------------------------------------------+
 * |                    maximum frame length                       | 44
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Flag {@link #FLAG_RENDEZVOUS}: this side takes rendezvous frames, reading them from the peer's
 * memory with RDMA READ ({@link Rendezvous}), and its queue pair allows the peer to read its own. A
 * side sends rendezvous frames only to a peer that set it, and only when it set it itself.
 *
 * <p>A refusing hello (the server's answer when it cannot take the connection) has a nonzero status
 * (a {@code dev.rdmarpc.rpc.Status} code) and the reason as UTF-8 payload. The MTU is the
 * {@code enum ibv_mtu} value of the sender's port (1 = 256 ... 5 = 4096); both sides use the smaller.
 */
final class Hello {
    /** Refusal status: the hello was malformed (the wire value of {@code Status.PROTOCOL_ERROR}). */
    static final int REFUSED_MALFORMED = 6;
    /** Refusal status: the server could not set the connection up (the wire value of {@code Status.HANDLER_FAILED}). */
    static final int REFUSED_SETUP_FAILED = 2;
    /** Refusal status: the server lacks memory or queue room (the wire value of {@code Status.RESOURCE_EXHAUSTED}). */
    static final int REFUSED_EXHAUSTED = 8;
    /** Flag: this side takes (and sends) rendezvous frames. */
    static final int FLAG_RENDEZVOUS = 1;
    /** Version of the hello payload. */
    static final int HELLO_VERSION = 1;
    static final int VERSION_OFFSET = 0;
    static final int FLAGS_OFFSET = 4;
    static final int QPN_OFFSET = 8;
    static final int PSN_OFFSET = 12;
    static final int GID_OFFSET = 16;
    static final int LID_OFFSET = 32;
    static final int MTU_OFFSET = 34;
    static final int RESERVED_OFFSET = 35;
    static final int RECEIVE_SIZE_OFFSET = 36;
    static final int RECEIVE_COUNT_OFFSET = 40;
    static final int MAX_FRAME_OFFSET = 44;
    /** Length of an accepting or requesting hello's payload. */
    static final int LENGTH = 48;
    /** Length of the whole frame of an accepting or requesting hello. */
    static final int FRAME_LENGTH = FrameDescriptor.HEADER_LENGTH + LENGTH;
    /** Longest refusal reason sent, in bytes. */
    static final int MAX_REASON_BYTES = 1024;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    int qpn;
    int psn;
    final byte[] gid = new byte[16];
    int lid;
    int mtu;
    int receiveSize;
    int receiveCount;
    int maxFrameLength;
    /** {@link #FLAG_RENDEZVOUS} or 0. */
    int flags;

    /** Writes this hello as a whole frame at {@code offset}; returns the frame length. */
    int encode(MemorySegment buf, long offset) {
        new FrameHeaderEncoder().wrap(buf, offset).type(FrameDescriptor.TYPE_RDMA_HELLO).payloadLength(LENGTH);
        long p = offset + FrameDescriptor.HEADER_LENGTH;
        buf.set(INT, p + VERSION_OFFSET, HELLO_VERSION);
        buf.set(INT, p + FLAGS_OFFSET, flags);
        buf.set(INT, p + QPN_OFFSET, qpn);
        buf.set(INT, p + PSN_OFFSET, psn);
        MemorySegment.copy(gid, 0, buf, ValueLayout.JAVA_BYTE, p + GID_OFFSET, 16);
        buf.set(SHORT, p + LID_OFFSET, (short) lid);
        buf.set(ValueLayout.JAVA_BYTE, p + MTU_OFFSET, (byte) mtu);
        buf.set(ValueLayout.JAVA_BYTE, p + RESERVED_OFFSET, (byte) 0);
        buf.set(INT, p + RECEIVE_SIZE_OFFSET, receiveSize);
        buf.set(INT, p + RECEIVE_COUNT_OFFSET, receiveCount);
        buf.set(INT, p + MAX_FRAME_OFFSET, maxFrameLength);
        return FRAME_LENGTH;
    }

    /**
     * Reads a hello frame (its header already passed {@code FrameDescriptor.check}).
     *
     * @return this
     * @throws HelloException with the peer's reason when it is a refusal, or when the hello is
     *                        malformed
     */
    Hello decode(MemorySegment buf, long offset, int frameLength) throws HelloException {
        if (FrameHeader.type(buf, offset) != FrameDescriptor.TYPE_RDMA_HELLO) {
            throw new HelloException(0, "expected an RDMA hello, got a frame of type " + FrameHeader.type(buf, offset));
        }
        int status = FrameHeader.status(buf, offset);
        int plen = FrameHeader.payloadLength(buf, offset);
        long p = offset + FrameDescriptor.HEADER_LENGTH;
        if (status != 0) {
            int n = Math.min(plen, Math.min(MAX_REASON_BYTES, frameLength - FrameDescriptor.HEADER_LENGTH));
            byte[] reason = new byte[Math.max(0, n)];
            MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, p, reason, 0, reason.length);
            throw new HelloException(status, new String(reason, StandardCharsets.UTF_8));
        }
        if (plen != LENGTH || frameLength != FRAME_LENGTH) {
            throw new HelloException(0, "RDMA hello of " + plen + " payload bytes, expected " + LENGTH);
        }
        int version = buf.get(INT, p + VERSION_OFFSET);
        if (version != HELLO_VERSION) {
            throw new HelloException(0, "RDMA hello version " + version + ", this side speaks " + HELLO_VERSION);
        }
        flags = buf.get(INT, p + FLAGS_OFFSET);
        if ((flags & ~FLAG_RENDEZVOUS) != 0 || buf.get(ValueLayout.JAVA_BYTE, p + RESERVED_OFFSET) != 0) {
            throw new HelloException(0, "RDMA hello with reserved bits set");
        }
        qpn = buf.get(INT, p + QPN_OFFSET);
        psn = buf.get(INT, p + PSN_OFFSET);
        MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, p + GID_OFFSET, gid, 0, 16);
        lid = buf.get(SHORT, p + LID_OFFSET) & 0xFFFF;
        mtu = buf.get(ValueLayout.JAVA_BYTE, p + MTU_OFFSET);
        receiveSize = buf.get(INT, p + RECEIVE_SIZE_OFFSET);
        receiveCount = buf.get(INT, p + RECEIVE_COUNT_OFFSET);
        maxFrameLength = buf.get(INT, p + MAX_FRAME_OFFSET);
        if ((qpn & ~0xFFFFFF) != 0 || qpn == 0) {
            throw new HelloException(0, "RDMA hello with an invalid queue pair number " + qpn);
        }
        if ((psn & ~0xFFFFFF) != 0) {
            throw new HelloException(0, "RDMA hello with an invalid packet sequence number " + psn);
        }
        if (mtu < 1 || mtu > 5) {
            throw new HelloException(0, "RDMA hello with an invalid MTU code " + mtu);
        }
        if (receiveSize < 4096 || Integer.bitCount(receiveSize) != 1) {
            throw new HelloException(0, "RDMA hello with an invalid receive buffer size " + receiveSize);
        }
        if (receiveCount < 1 || receiveCount > 16384) {
            throw new HelloException(0, "RDMA hello with an invalid receive buffer count " + receiveCount);
        }
        if (maxFrameLength < FrameDescriptor.HEADER_LENGTH || maxFrameLength > FrameDescriptor.MAX_FRAME_LENGTH_LIMIT) {
            throw new HelloException(0, "RDMA hello with an invalid maximum frame length " + maxFrameLength);
        }
        return this;
    }

    /** @return the length of the frame {@link #encodeRefusal} writes for {@code reason} */
    static int refusalLength(String reason) {
        return FrameDescriptor.HEADER_LENGTH + reasonBytes(reason).length;
    }

    /** Writes a refusing hello with {@code status} (nonzero) and {@code reason}; returns the frame length. */
    static int encodeRefusal(MemorySegment buf, long offset, int status, String reason) {
        if (status == 0) {
            throw new IllegalArgumentException("a refusal needs a nonzero status");
        }
        byte[] r = reasonBytes(reason);
        new FrameHeaderEncoder().wrap(buf, offset).type(FrameDescriptor.TYPE_RDMA_HELLO).status(status).payloadLength(r.length);
        MemorySegment.copy(r, 0, buf, ValueLayout.JAVA_BYTE, offset + FrameDescriptor.HEADER_LENGTH, r.length);
        return FrameDescriptor.HEADER_LENGTH + r.length;
    }

    private static byte[] reasonBytes(String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        return r.length <= MAX_REASON_BYTES ? r : Arrays.copyOf(r, MAX_REASON_BYTES);
    }

    @Override
    public String toString() {
        return "Hello[qpn=0x" + Integer.toHexString(qpn) + ", psn=0x" + Integer.toHexString(psn) + ", gid="
                + HexFormat.of().formatHex(gid) + ", lid=" + lid + ", mtu=" + mtu + ", recv=" + receiveCount + "x"
                + receiveSize + ", maxFrame=" + maxFrameLength + "]";
    }

    /** A hello that is a refusal or is malformed. */
    static final class HelloException extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        HelloException(int status, String message) {
            super(message);
            this.status = status;
        }

        /** @return the refusal's status code, 0 for a malformed hello */
        int status() {
            return status;
        }
    }
}
