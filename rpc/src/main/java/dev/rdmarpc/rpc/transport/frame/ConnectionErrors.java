package dev.rdmarpc.rpc.transport.frame;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * A connection-level error frame (a response with {@link FrameDescriptor#CONNECTION_REQUEST_ID}, a
 * server's last word) read where a connect fails on it, below the RPC layer: the RDMA client's
 * handshake, and a TLS client whose server answered in plain.
 */
public final class ConnectionErrors {
    /** Wire value of {@code Status.RESOURCE_EXHAUSTED}. */
    private static final int RESOURCE_EXHAUSTED = 8;
    /** Wire value of {@code Status.PERMISSION_DENIED}. */
    private static final int PERMISSION_DENIED = 14;

    private ConnectionErrors() {
    }

    /** @return true when the header at {@code offset} is a connection-level error's */
    public static boolean is(MemorySegment buf, long offset) {
        return FrameHeader.type(buf, offset) == FrameDescriptor.TYPE_RESPONSE
                && FrameHeader.requestId(buf, offset) == FrameDescriptor.CONNECTION_REQUEST_ID;
    }

    /**
     * The error as the exception its status calls for, its message {@code prefix} and then the
     * server's words: {@link ResourceExhaustedException}, {@link PeerRefusedException}, else what
     * {@code otherwise} makes.
     *
     * @param available bytes of the frame at hand from {@code offset}
     * @return the exception, or null when fewer than the whole frame's bytes are at hand
     */
    public static IOException exception(MemorySegment buf, long offset, long available, String prefix,
                                        Function<String, IOException> otherwise) {
        if (available < FrameDescriptor.HEADER_LENGTH) {
            return null;
        }
        int payload = FrameHeader.payloadLength(buf, offset);
        if (payload < 0 || payload > available - FrameDescriptor.HEADER_LENGTH) {
            return null;
        }
        byte[] text = buf.asSlice(offset + FrameDescriptor.HEADER_LENGTH, payload).toArray(ValueLayout.JAVA_BYTE);
        String msg = prefix + new String(text, StandardCharsets.UTF_8);
        return switch (FrameHeader.status(buf, offset)) {
            case RESOURCE_EXHAUSTED -> new ResourceExhaustedException(msg);
            case PERMISSION_DENIED -> new PeerRefusedException(msg);
            default -> otherwise.apply(msg);
        };
    }
}
