package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.MetadataLimits;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/** Encodes response frames straight into a connection's claimed send space, through its {@link FrameWriter}; any thread. */
final class ResponseWriter {
    private static final System.Logger LOG = System.getLogger(ResponseWriter.class.getName());
    private static final int MAX_ERROR_MESSAGE_CHARS = 2048;

    private ResponseWriter() {
    }

    /** Writes a response from raw bytes, with {@code md} as its metadata; returns the status actually sent. */
    static Status writeBytes(FrameWriter w, ServerCore core, long requestId, int methodId, MemorySegment src,
                             long off, int len, Attachment att, Metadata md, ResponseSizes sizes) {
        Counters m = core.metrics;
        int mlen = MetadataLimits.blockLength(md);
        long frame = (long) FrameDescriptor.HEADER_LENGTH + mlen + len + att.length();
        Status refused = refusal(w, core, requestId, methodId, md, frame);
        if (refused != null) {
            return refused;
        }
        // Bytes of the request being handled (an echo) go from its receive buffer, when the transport can.
        long at = att.length() == 0 && mlen == 0 ? w.claimPayloadFromReceived((int) frame, src, off, len) : claim(w, (int) frame, att);
        if (at < 0) {
            return claimFailed(w, m, requestId, methodId, at);
        }
        w.response(requestId, methodId, FrameDescriptor.STATUS_OK).metadata(md).payload(src, off, len).attachment(att);
        return commit(w, m, requestId, methodId, att, frame, sizes, (long) len + att.length());
    }

    /** Writes a response encoded by {@code codec}, with {@code md} as its metadata; returns the status actually sent. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Status writeValue(FrameWriter w, ServerCore core, long requestId, int methodId, Codec codec,
                             Object value, Attachment att, Metadata md, ResponseSizes sizes) {
        Counters m = core.metrics;
        int len;
        try {
            len = codec.encodedSize(value);
        } catch (RuntimeException e) {
            return writeError(w, m, requestId, methodId, Status.HANDLER_FAILED, "response could not be encoded: " + e);
        }
        long frame = (long) FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(md) + len + att.length();
        Status refused = refusal(w, core, requestId, methodId, md, frame);
        if (refused != null) {
            return refused;
        }
        long at = claim(w, (int) frame, att);
        if (at < 0) {
            return claimFailed(w, m, requestId, methodId, at);
        }
        try {
            w.response(requestId, methodId, FrameDescriptor.STATUS_OK).metadata(md).payload(codec, value, len).attachment(att);
        } catch (RuntimeException e) { // the writer aborted the claim
            return writeError(w, m, requestId, methodId, Status.HANDLER_FAILED, "response could not be encoded: " + e);
        }
        return commit(w, m, requestId, methodId, att, frame, sizes, (long) len + att.length());
    }

    /**
     * Claims a response frame: one whose attachment the transport sends from where it lies when it can
     * (RDMA, memory registered with the transport: see {@link CallContext#responseAttachment}), else a
     * whole frame to copy it into.
     */
    private static long claim(FrameWriter w, int frame, Attachment att) {
        return att.length() > 0 ? w.claimAttachmentInPlace(frame, att, Long.MAX_VALUE) : w.claim(frame);
    }

    /**
     * Refuses a response whose metadata or frame is over the server's limits: writes the error response
     * instead (PAYLOAD_TOO_LARGE).
     *
     * @return the status sent instead, or null when the response fits
     */
    private static Status refusal(FrameWriter w, ServerCore core, long requestId, int methodId, Metadata md, long frame) {
        if (md.encodedLength() > core.maxMetadataBytes) {
            return writeError(w, core.metrics, requestId, methodId, Status.PAYLOAD_TOO_LARGE,
                    MetadataLimits.overLimit("response", md.encodedLength(), "server", core.maxMetadataBytes));
        }
        if (frame > core.maxFrameLength) {
            return writeError(w, core.metrics, requestId, methodId, Status.PAYLOAD_TOO_LARGE,
                    "response frame of " + frame + " bytes exceeds the maximum frame length " + core.maxFrameLength);
        }
        return null;
    }

    /** @throws IllegalArgumentException unless {@code status} is an error a response may carry */
    static void requireSendable(Status status) {
        if (status == Status.OK || !status.isWire()) {
            throw new IllegalArgumentException("not an error status that can be sent: " + status);
        }
    }

    /**
     * Writes the error response of a failed handler (or of a refusing interceptor): its status and
     * message (see {@link #statusOf}), and as metadata {@code md} plus what an {@link RpcException}
     * carries. Metadata over the server's limit is left out, and the message says so.
     */
    static Status writeFailure(FrameWriter w, ServerCore core, long requestId, int methodId, Throwable t, Metadata md) {
        Metadata all = t instanceof RpcException re && !re.metadata().isEmpty() ? md.withAll(re.metadata()) : md;
        return writeError(w, core, requestId, methodId, statusOf(t), messageOf(t), all);
    }

    /**
     * Writes an error response with {@code md} as its metadata; metadata over the server's limit is
     * left out, and the message says so (the error itself still goes out).
     */
    static Status writeError(FrameWriter w, ServerCore core, long requestId, int methodId, Status status, String message,
                             Metadata md) {
        if (md.encodedLength() > core.maxMetadataBytes) {
            message = (message == null ? status.name() : message) + " (its "
                    + MetadataLimits.overLimit("response", md.encodedLength(), "server", core.maxMetadataBytes)
                    + ": left out)";
            md = Metadata.EMPTY;
        }
        return writeError(w, core.metrics, requestId, methodId, status, message, md);
    }

    /**
     * Commits the written frame; a GPU attachment that cannot be copied is answered with an error instead.
     * Once it went, {@code sizes} (null for none) is told its {@code bytes}.
     */
    private static Status commit(FrameWriter w, Counters m, long requestId, int methodId, Attachment att, long frame,
                                 ResponseSizes sizes, long bytes) {
        try {
            w.commit(att);
        } catch (RuntimeException e) {
            // Before a commit the claim was aborted and an error still fits; after a held commit the
            // connection is closed and this finds it closed.
            LOG.log(System.Logger.Level.WARNING, "GPU response attachment could not be sent", e);
            return writeError(w, m, requestId, methodId, Status.HANDLER_FAILED,
                    "response attachment could not be copied from GPU " + att.deviceId() + ": " + e.getMessage());
        }
        m.bytesSent.add(frame);
        if (sizes != null) {
            sizes.responseWritten(bytes);
        }
        return Status.OK;
    }

    /** Writes an error response; returns its status. */
    static Status writeError(FrameWriter w, Counters m, long requestId, int methodId, Status status, String message) {
        return writeError(w, m, requestId, methodId, status, message, Metadata.EMPTY);
    }

    /** Writes an error response with metadata already within the limit; returns its status. */
    static Status writeError(FrameWriter w, Counters m, long requestId, int methodId, Status status, String message,
                             Metadata md) {
        m.errors.increment();
        String msg = message == null ? status.name() : message;
        if (msg.length() > MAX_ERROR_MESSAGE_CHARS) {
            msg = msg.substring(0, MAX_ERROR_MESSAGE_CHARS) + "...";
        }
        int len = Codecs.STRING.encodedSize(msg);
        int mlen = MetadataLimits.blockLength(md);
        long at = w.claim(FrameDescriptor.HEADER_LENGTH + mlen + len);
        if (at < 0) {
            if (at != Connection.CLOSED) {
                // Not even an error fits: the client would wait for its timeout. Close instead, so it
                // learns at once (every pending call fails with CONNECTION_CLOSED).
                String why = at == Connection.NO_BUFFER ? "buffer pool exhausted" : "send queue full";
                Connection c = w.connection();
                LOG.log(System.Logger.Level.WARNING, "closing connection to {0}: cannot send a response ({1})",
                        c.remoteAddress(), why);
                c.close(new IOException("cannot send a response: " + why));
            }
            return status;
        }
        w.response(requestId, methodId, status.code()).metadata(md).payload(Codecs.STRING, msg, len);
        w.commit();
        m.bytesSent.add(FrameDescriptor.HEADER_LENGTH + mlen + len);
        return status;
    }

    /**
     * Encodes a connection-level error ({@link FrameDescriptor#CONNECTION_REQUEST_ID}) into memory of
     * its own, for {@link Connection#closeAfter}: not the hot path, and it needs nothing from the pool.
     */
    static MemorySegment connectionError(Status status, String message) {
        String msg = message == null ? status.name() : message;
        if (msg.length() > MAX_ERROR_MESSAGE_CHARS) {
            msg = msg.substring(0, MAX_ERROR_MESSAGE_CHARS) + "...";
        }
        int len = Codecs.STRING.encodedSize(msg);
        MemorySegment frame = MemorySegment.ofArray(new byte[FrameDescriptor.HEADER_LENGTH + len]);
        new FrameHeaderEncoder().wrap(frame, 0).type(FrameDescriptor.TYPE_RESPONSE)
                .requestId(FrameDescriptor.CONNECTION_REQUEST_ID).status(status.code()).payloadLength(len);
        Codecs.STRING.encode(msg, frame, FrameDescriptor.HEADER_LENGTH);
        return frame;
    }

    private static Status claimFailed(FrameWriter c, Counters m, long requestId, int methodId, long code) {
        if (code == Connection.CLOSED) {
            return Status.CONNECTION_CLOSED;
        }
        return writeError(c, m, requestId, methodId, code == Connection.NO_BUFFER ? Status.RESOURCE_EXHAUSTED : Status.OVERLOADED,
                code == Connection.NO_BUFFER ? "server buffer pool exhausted" : "server send queue full");
    }

    static Status statusOf(Throwable t) {
        if (t instanceof RpcException re && re.status().isWire()) {
            return re.status();
        }
        return Status.HANDLER_FAILED;
    }

    static String messageOf(Throwable t) {
        String msg = t.getMessage();
        return msg != null ? msg : t.getClass().getName();
    }
}
