package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import java.lang.foreign.MemorySegment;

/**
 * The one way requests and responses are written into a connection (Aeron's {@code tryClaim}):
 * claim the frame's space, write its header and payload and attachment there, then commit it, or
 * abort it when writing fails.
 * {@snippet :
 * long at = writer.claim(frameLength, unsentLimit);     // or claimAttachmentInPlace, ...
 * if (at < 0) { ... }                                  // Connection.CLOSED, NO_BUFFER, BACK_PRESSURED
 * writer.request(id, method.id()).payload(codec, request, plen).attachment(attachment);  // aborts and rethrows on a failure
 * writer.commit(attachment);                           // a device attachment is copied from the GPU here
 * }
 *
 * <p>Each {@code claim*} method tries the zero-copy way its name says ({@link ZeroCopySend}, asked for
 * once, when the writer is made) and falls back to a plain claim when the connection does not offer
 * it or not now; the writer remembers which bytes the transport takes from the
 * caller's memory and skips copying them. One writer per connection, used from any thread: the state
 * of the open claim lives here only between a successful claim and its commit or abort, while the
 * claiming thread holds the connection's send lock, so no two threads ever use it at once.
 */
public final class FrameWriter {
    private final Connection connection;
    /** The connection's zero-copy ways, or null when it has none. */
    private final ZeroCopySend zeroCopy;
    private final FrameHeaderEncoder header = new FrameHeaderEncoder();

    // The open claim (the claiming thread holds the send lock).
    private MemorySegment buffer;
    private long frameStart;
    /** The whole payload written so far: the metadata block, then the codec's bytes. */
    private int payloadLength;
    /** The metadata block's length, 0 when the frame has none. */
    private int metadataLength;
    private boolean payloadInPlace;
    private boolean attachmentInPlace;

    public FrameWriter(Connection connection) {
        this.connection = connection;
        this.zeroCopy = connection instanceof ZeroCopySend z ? z : null;
    }

    /** @return the connection written to */
    public Connection connection() {
        return connection;
    }

    // ------------------------------------------------------------------ claim

    /**
     * Claims a frame (see {@link Connection#claim(int)}).
     *
     * @return the frame's offset, or a {@link Connection} result code (nothing held)
     */
    public long claim(int frameLength) {
        return opened(connection.claim(frameLength), false, false);
    }

    /**
     * Claims a frame unless {@code unsentLimit} bytes are queued unsent (see
     * {@link Connection#claim(int, long)}).
     *
     * @return the frame's offset, or a {@link Connection} result code (nothing held)
     */
    public long claim(int frameLength, long unsentLimit) {
        return opened(connection.claim(frameLength, unsentLimit), false, false);
    }

    /**
     * Claims a frame whose attachment the transport sends straight from {@code attachment} when it
     * can ({@link ZeroCopySend#claimWithTail}), else a whole frame to copy it into (a device attachment
     * is then copied from the GPU by {@link #commit(Attachment)}).
     */
    public long claimAttachmentInPlace(int frameLength, Attachment attachment, long unsentLimit) {
        return claimAttachmentInPlace(frameLength, nicView(attachment), unsentLimit);
    }

    /** As {@link #claimAttachmentInPlace(int, Attachment, long)}, for host memory or {@link #nicView}. */
    public long claimAttachmentInPlace(int frameLength, MemorySegment attachment, long unsentLimit) {
        long at = zeroCopy == null ? ZeroCopySend.UNSUPPORTED : zeroCopy.claimWithTail(frameLength, attachment, unsentLimit);
        return at != ZeroCopySend.UNSUPPORTED ? opened(at, false, true) : claim(frameLength, unsentLimit);
    }

    /**
     * @return the attachment's memory as the NIC names it: a host attachment's segment, or for device
     *         memory a segment of its device addresses, which only a transport that registered them
     *         uses (to point work requests at them) and nothing ever dereferences
     */
    public static MemorySegment nicView(Attachment attachment) {
        return attachment.location() == Attachment.Location.HOST ? attachment.segment()
                : MemorySegment.ofAddress(attachment.address()).reinterpret(attachment.length());
    }

    /**
     * Claims a frame whose payload (its last bytes) the transport writes straight from
     * {@code payload} when it can ({@link ZeroCopySend#claimInPlace}, named by {@code token}), else a
     * whole frame to copy it into.
     */
    public long claimPayloadInPlace(int frameLength, MemorySegment payload, long unsentLimit, long token) {
        long at = zeroCopy == null ? ZeroCopySend.UNSUPPORTED
                : zeroCopy.claimInPlace(frameLength, payload, unsentLimit, token);
        return at != ZeroCopySend.UNSUPPORTED ? opened(at, true, false) : claim(frameLength, unsentLimit);
    }

    /**
     * Claims a frame whose payload (its last bytes) is sent from the receive buffer of the frame
     * being handled when the transport can ({@link ZeroCopySend#claimFromReceived}), else a whole frame
     * to copy it into.
     */
    public long claimPayloadFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        long at = zeroCopy == null ? ZeroCopySend.UNSUPPORTED : zeroCopy.claimFromReceived(frameLength, src, offset, length);
        return at != ZeroCopySend.UNSUPPORTED ? opened(at, true, false) : claim(frameLength);
    }

    /**
     * Makes {@code c} stop reading the payload of the in-place frame {@code token}
     * ({@link ZeroCopySend#detachInPlace}); on its I/O thread. Only a call that {@link #claimPayloadInPlace}
     * sent in place needs it, and that went through a connection that offers the way.
     */
    public static void detachInPlace(Connection c, long token) {
        if (c instanceof ZeroCopySend z) {
            z.detachInPlace(token);
        }
    }

    private long opened(long at, boolean payloadInPlace, boolean attachmentInPlace) {
        if (at >= 0) {
            this.buffer = connection.claimBuffer();
            this.frameStart = at;
            this.payloadLength = 0;
            this.metadataLength = 0;
            this.payloadInPlace = payloadInPlace;
            this.attachmentInPlace = attachmentInPlace;
        }
        return at;
    }

    // ------------------------------------------------------------------ write (the claim is open)

    /** Writes a request header for the open claim; the lengths follow from the payload and attachment. */
    /** @param remainingNanos how long the client still waits for the call (its timeout field) */
    public FrameWriter request(long requestId, int methodId, long remainingNanos) {
        header.wrap(buffer, frameStart).type(FrameDescriptor.TYPE_REQUEST).requestId(requestId).methodId(methodId)
                .timeout(FrameDescriptor.encodeTimeout(remainingNanos));
        return this;
    }

    /** Writes a response header with {@code status} for the open claim. */
    public FrameWriter cancel(long requestId, int methodId) {
        header.wrap(buffer, frameStart).type(FrameDescriptor.TYPE_CANCEL).requestId(requestId).methodId(methodId);
        return this;
    }

    public FrameWriter response(long requestId, int methodId, int status) {
        header.wrap(buffer, frameStart).type(FrameDescriptor.TYPE_RESPONSE).requestId(requestId).methodId(methodId)
                .status(status);
        return this;
    }

    /**
     * Writes the header of a stream's message ({@link FrameDescriptor#TYPE_STREAM_MESSAGE}) or window
     * update ({@link FrameDescriptor#TYPE_STREAM_WINDOW}) for the open claim.
     */
    public FrameWriter stream(int type, long requestId, int methodId, int flags) {
        header.wrap(buffer, frameStart).type(type).requestId(requestId).methodId(methodId).flags(flags);
        return this;
    }

    /** Length of a stream window update frame. */
    public static final int WINDOW_FRAME_LENGTH = FrameDescriptor.HEADER_LENGTH + FrameDescriptor.STREAM_WINDOW_PAYLOAD;

    /**
     * Writes a stream window update granting {@code increment} bytes, at once and never waiting (a
     * claim of its own, committed).
     *
     * @return false when the connection cannot take it now (the grant is still owed); true when it
     *         was written, or when the connection is closed (nothing is owed any more)
     */
    public boolean windowUpdate(long requestId, int methodId, long increment) {
        long at = claim(WINDOW_FRAME_LENGTH);
        if (at < 0) {
            return at == Connection.CLOSED;
        }
        stream(FrameDescriptor.TYPE_STREAM_WINDOW, requestId, methodId, 0);
        header.payloadLength(FrameDescriptor.STREAM_WINDOW_PAYLOAD);
        buffer.set(dev.rdmarpc.rpc.codec.Codecs.INT_LE, frameStart + FrameDescriptor.HEADER_LENGTH, (int) increment);
        commit();
        return true;
    }

    /** Adds {@code flag} to the flags of the header being written (after {@link #metadata}, which sets its own). */
    public FrameWriter flag(int flag) {
        header.flags(dev.rdmarpc.rpc.protocol.FrameHeader.flags(buffer, frameStart) | flag);
        return this;
    }

    /**
     * Writes {@code metadata} as the metadata block the payload starts with, and sets the flag that
     * says so; nothing for {@link Metadata#EMPTY}. After the header, before the payload; the claim
     * counted {@link Metadata#encodedLength()} more bytes, and does not send the payload in place.
     */
    public FrameWriter metadata(Metadata metadata) {
        if (!metadata.isEmpty()) {
            header.flags(FrameDescriptor.FLAG_METADATA);
            metadata.writeTo(buffer, frameStart + FrameDescriptor.HEADER_LENGTH);
            metadataLength = metadata.encodedLength();
            payloadLength = metadataLength;
        }
        return this;
    }

    /** @return where the codec's bytes start: after the header and the metadata block */
    private long payloadStart() {
        return frameStart + FrameDescriptor.HEADER_LENGTH + metadataLength;
    }

    /**
     * Writes the payload's length and copies its {@code length} bytes from {@code src} at
     * {@code offset}, unless the claim sends them in place. On a failure the claim is aborted and
     * the exception rethrown.
     */
    public FrameWriter payload(MemorySegment src, long offset, int length) {
        payloadLength = metadataLength + length;
        header.payloadLength(payloadLength);
        if (!payloadInPlace) {
            try {
                MemorySegment.copy(src, offset, buffer, payloadStart(), length);
            } catch (Throwable t) {
                connection.abort();
                throw t;
            }
        }
        return this;
    }

    /**
     * Writes the payload's length and encodes {@code value} ({@code length} bytes, as
     * {@code codec.encodedSize} said). On a failure the claim is aborted and the exception rethrown.
     */
    public <T> FrameWriter payload(Codec<T> codec, T value, int length) {
        payloadLength = metadataLength + length;
        header.payloadLength(payloadLength);
        try {
            codec.encode(value, buffer, payloadStart());
        } catch (Throwable t) {
            connection.abort();
            throw t;
        }
        return this;
    }

    /**
     * Writes the attachment's length and copies host bytes after the payload, unless the claim
     * sends them in place; a device attachment's bytes are copied by {@link #commit(Attachment)}.
     */
    public FrameWriter attachment(Attachment attachment) {
        return attachment.location() == Attachment.Location.DEVICE ? attachmentLength(attachment.length())
                : attachment(attachment.segment());
    }

    /**
     * Writes the attachment's length and copies {@code attachment} (host memory, or
     * {@link MemorySegment#NULL} for none) after the payload, unless the claim sends it in place. On
     * a failure the claim is aborted and the exception rethrown.
     */
    public FrameWriter attachment(MemorySegment attachment) {
        long length = attachment.byteSize();
        attachmentLength((int) length);
        if (length > 0 && !attachmentInPlace) {
            try {
                MemorySegment.copy(attachment, 0, buffer, attachmentOffset(), length);
            } catch (Throwable t) {
                connection.abort();
                throw t;
            }
        }
        return this;
    }

    private FrameWriter attachmentLength(int length) {
        header.attachmentLength(length);
        return this;
    }

    private long attachmentOffset() {
        return frameStart + FrameDescriptor.HEADER_LENGTH + payloadLength;
    }

    /** Publishes the written frame for sending (see {@link Connection#commit()}). */
    public void commit() {
        connection.commit();
    }

    /**
     * Publishes the written frame; with a device attachment its bytes are copied from the GPU into
     * the frame first, or while the transport sends the rest (see {@link DeviceAttachments}), unless
     * the claim sends it from the GPU in place.
     *
     * @throws RuntimeException when the device copy fails: the claim was aborted, or the partial frame
     *                          abandoned (which closes the connection)
     */
    public void commit(Attachment attachment) {
        if (attachment.location() == Attachment.Location.DEVICE && !attachmentInPlace) {
            DeviceAttachments.fillAndCommit(connection, zeroCopy, buffer, frameStart, attachmentOffset(), attachment);
        } else {
            connection.commit();
        }
    }
}
