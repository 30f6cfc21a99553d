package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.MetadataView;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;

/** The reusable {@link ResponseView} of one client connection; I/O thread only. */
final class ResponseViewImpl implements ResponseView {
    private MemorySegment buffer;
    private long offset;
    /** The codec's bytes: the payload without its metadata block. */
    private int payloadLength;
    private int metadataLength;
    private int attachmentLength;
    private final MetadataView metadataView = new MetadataView();

    /** Over a response whose metadata (if any) was checked. */
    ResponseViewImpl wrap(MemorySegment buffer, long offset) {
        this.buffer = buffer;
        this.offset = offset;
        this.metadataLength = FrameHeader.metadataLength(buffer, offset);
        this.payloadLength = FrameHeader.payloadLength(buffer, offset) - metadataLength;
        this.attachmentLength = FrameHeader.attachmentLength(buffer, offset);
        return this;
    }

    void clear() {
        buffer = null;
        metadataView.clear();
    }

    @Override
    public MetadataView metadata() {
        return metadataView.wrap(buffer, offset + FrameDescriptor.HEADER_LENGTH, metadataLength);
    }

    @Override
    public long requestId() {
        return FrameHeader.requestId(buffer, offset);
    }

    @Override
    public int methodId() {
        return FrameHeader.methodId(buffer, offset);
    }

    @Override
    public MemorySegment buffer() {
        return buffer;
    }

    @Override
    public long payloadOffset() {
        return offset + FrameDescriptor.HEADER_LENGTH + metadataLength;
    }

    @Override
    public int payloadLength() {
        return payloadLength;
    }

    @Override
    public long attachmentOffset() {
        return offset + FrameDescriptor.HEADER_LENGTH + metadataLength + payloadLength;
    }

    @Override
    public int attachmentLength() {
        return attachmentLength;
    }

    @Override
    public MemorySegment payload() {
        return buffer.asSlice(payloadOffset(), payloadLength);
    }

    @Override
    public MemorySegment attachment() {
        return buffer.asSlice(attachmentOffset(), attachmentLength);
    }

    @Override
    public <T> T decode(Codec<T> codec) {
        return codec.decode(buffer, payloadOffset(), payloadLength);
    }
}
