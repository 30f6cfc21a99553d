package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;

/** The reusable {@link ResponseView} of one client connection; I/O thread only. */
final class ResponseViewImpl implements ResponseView {
    private MemorySegment buffer;
    private long offset;
    private int payloadLength;
    private int attachmentLength;

    ResponseViewImpl wrap(MemorySegment buffer, long offset) {
        this.buffer = buffer;
        this.offset = offset;
        this.payloadLength = FrameHeader.payloadLength(buffer, offset);
        this.attachmentLength = FrameHeader.attachmentLength(buffer, offset);
        return this;
    }

    void clear() {
        buffer = null;
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
        return offset + FrameDescriptor.HEADER_LENGTH;
    }

    @Override
    public int payloadLength() {
        return payloadLength;
    }

    @Override
    public long attachmentOffset() {
        return offset + FrameDescriptor.HEADER_LENGTH + payloadLength;
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
