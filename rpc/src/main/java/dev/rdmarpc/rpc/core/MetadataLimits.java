package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.MetadataBlock;
import java.lang.foreign.MemorySegment;

/**
 * The metadata rules both sides apply: what a block takes in a frame, and the status and reason a
 * block over an endpoint's {@code maxMetadataBytes}, or malformed, is refused with.
 */
public final class MetadataLimits {
    private MetadataLimits() {
    }

    /** @return the bytes {@code md} takes in a frame: 0 for none (no block is written), else its encoded length */
    public static int blockLength(Metadata md) {
        return md.isEmpty() ? 0 : md.encodedLength();
    }

    /**
     * @param kind  "request" or "response"
     * @param bytes the block's length
     * @param side  whose limit: "client" or "server"
     * @param max   that limit
     * @return the reason, as every refusal over a limit says it
     */
    public static String overLimit(String kind, int bytes, String side, int max) {
        return kind + " metadata of " + bytes + " bytes is over the " + side + "'s maxMetadataBytes (" + max + ")";
    }

    /**
     * Checks the metadata block of a received frame that has the metadata flag.
     *
     * @param kind   "request" or "response"
     * @param method the called method's name, for the reason
     * @param side   the receiver: "client" or "server"
     * @param max    its limit
     * @return null when the block is well formed and within the limit, else what to refuse it with:
     *         PROTOCOL_ERROR for a malformed block, PAYLOAD_TOO_LARGE for one over the limit
     */
    public static RpcException refusal(MemorySegment buf, long offset, String kind, String method, String side, int max) {
        String bad = MetadataBlock.check(buf, offset + FrameDescriptor.HEADER_LENGTH, FrameHeader.payloadLength(buf, offset));
        if (bad != null) {
            return new RpcException(Status.PROTOCOL_ERROR, kind + " of " + method + " has bad metadata: " + bad);
        }
        int length = FrameHeader.metadataLength(buf, offset);
        return length > max ? new RpcException(Status.PAYLOAD_TOO_LARGE, overLimit(kind, length, side, max)) : null;
    }
}
