package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.DeferredCall;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.MetadataView;
import dev.rdmarpc.rpc.RawCall;
import dev.rdmarpc.rpc.RpcProvider.Registration.Kind;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.DeviceAttachments;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * The context of a connection's inline and raw calls: a reusable {@link RawCall} / {@link CallContext}
 * flyweight over the request's frame, which runs one call at a time on the connection's I/O thread.
 */
final class InlineCall extends ResponseSizes implements RawCall {
    private static final System.Logger LOG = System.getLogger(InlineCall.class.getName());

    private final ServerConnection connection;
    private final ServerCore core;
    private final FrameWriter writer;
    private final InetSocketAddress peer;
    /** Deferred raw calls answered, for the next {@link #defer()}; guarded by itself. */
    private final ArrayDeque<DeferredRawCall> spareDeferred = new ArrayDeque<>();

    // the current call
    private MemorySegment buf;
    private long frameOffset;
    private long requestId;
    private int methodId;
    /** The codec's bytes of the payload: the payload without the metadata block. */
    private int payloadLength;
    /** The request's metadata block, which starts the payload; 0 when it has none. */
    private int metadataLength;
    private int attachmentLength;
    private MethodRegistry.Entry entry;
    private Metadata responseMetadata = Metadata.EMPTY;
    private final MetadataView metadataView = new MetadataView();
    /** The call's deadline ({@link System#nanoTime()}), when {@link #hasDeadline}. */
    private long deadlineNanos;
    private boolean hasDeadline;
    private boolean responded;
    private Attachment responseAttachment = Attachment.NONE;

    InlineCall(ServerConnection connection) {
        this.connection = connection;
        this.core = connection.core();
        this.writer = connection.writer;
        this.peer = connection.peer();
    }

    /** Runs an inline or raw call on the I/O thread, this being its context while it runs. */
    void run(MethodRegistry.Entry e, MemorySegment frame, long offset, int length, long id, int mid, boolean deadline,
             long due, int mlen) {
        boolean timed = Events.serverCallEnabled();
        long start = timed ? System.nanoTime() : 0;
        hasDeadline = deadline;
        deadlineNanos = due;
        buf = frame;
        frameOffset = offset;
        requestId = id;
        methodId = mid;
        entry = e;
        metadataLength = mlen;
        payloadLength = FrameHeader.payloadLength(frame, offset) - mlen;
        attachmentLength = FrameHeader.attachmentLength(frame, offset);
        responded = false;
        responseUnknown();
        responseAttachment = Attachment.NONE;
        responseMetadata = Metadata.EMPTY;
        Status status;
        if (deadline) {
            InheritedDeadline.enter(due);
        }
        try {
            status = core.interceptors.length == 0 ? run(e) : runIntercepted(e);
        } finally {
            if (deadline) {
                InheritedDeadline.exit();
            }
            buf = null;
            responseAttachment = Attachment.NONE;
            responseMetadata = Metadata.EMPTY;
            metadataView.clear();
        }
        if (timed) {
            Events.serverCall(e.method().name(), mid, peer, status.name(), System.nanoTime() - start, length, e.mode().name());
        }
    }

    private Status run(MethodRegistry.Entry e) {
        return e.mode() == Kind.RAW ? runRaw(e) : runInline(e);
    }

    /** The inline or raw call with the interceptors around it. */
    private Status runIntercepted(MethodRegistry.Entry e) {
        Throwable refused = core.beforeCall(this);
        Status status;
        if (refused != null) {
            responded = true;
            status = ResponseWriter.writeFailure(writer, core, requestId, methodId, refused, responseMetadata);
        } else {
            status = run(e);
        }
        core.afterCall(this, status);
        return status;
    }

    private Status runRaw(MethodRegistry.Entry e) {
        try {
            e.raw().handle(this);
        } catch (Throwable t) {
            if (!responded) {
                responded = true;
                return ResponseWriter.writeFailure(writer, core, requestId, methodId, t, responseMetadata);
            }
            LOG.log(System.Logger.Level.WARNING, "raw handler of " + e.method().name() + " threw after responding", t);
            return Status.OK;
        }
        if (!responded) {
            responded = true;
            return ResponseWriter.writeError(writer, core.metrics, requestId, methodId, Status.HANDLER_FAILED,
                    "handler of " + e.method().name() + " returned without responding");
        }
        return lastStatus;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Status runInline(MethodRegistry.Entry e) {
        Object request;
        try {
            request = e.method().requestCodec().decode(buf, payloadOffset(), payloadLength);
        } catch (RuntimeException ex) {
            return ResponseWriter.writeError(writer, core.metrics, requestId, methodId, Status.PROTOCOL_ERROR,
                    "request of " + e.method().name() + " could not be decoded: " + ex.getMessage());
        }
        Object response;
        try {
            response = ((Handler) e.handler()).handle(this, request);
        } catch (Throwable t) {
            return ResponseWriter.writeFailure(writer, core, requestId, methodId, t, responseMetadata);
        }
        return ResponseWriter.writeValue(writer, core, requestId, methodId, e.method().responseCodec(), response,
                responseAttachment, responseMetadata, this);
    }


    private Status lastStatus = Status.OK;

    @Override
    public InetSocketAddress peer() {
        return peer;
    }

    @Override
    public javax.net.ssl.SSLSession tlsSession() {
        return connection.tlsSession();
    }

    @Override
    public int methodId() {
        return methodId;
    }

    @Override
    public long requestId() {
        return requestId;
    }

    @Override
    public String methodName() {
        return entry.method().name();
    }

    @Override
    public Metadata requestMetadata() {
        return metadataLength == 0 ? Metadata.EMPTY : Metadata.readFrom(buf, frameOffset + FrameDescriptor.HEADER_LENGTH);
    }

    @Override
    public MetadataView requestMetadataView() {
        return metadataView.wrap(buf, frameOffset + FrameDescriptor.HEADER_LENGTH, metadataLength);
    }

    @Override
    public void responseMetadata(Metadata metadata) {
        this.responseMetadata = Objects.requireNonNull(metadata, "metadata");
    }

    @Override
    public Metadata responseMetadata() {
        return responseMetadata;
    }

    @Override
    public Attachment requestAttachment() {
        return attachmentLength == 0 ? Attachment.NONE : Attachment.of(buf.asSlice(attachmentOffset(), attachmentLength));
    }

    @Override
    public void responseAttachment(Attachment attachment) {
        Objects.requireNonNull(attachment, "attachment");
        DeviceAttachments.validate(attachment);
        this.responseAttachment = attachment;
    }

    @Override
    public long remainingNanos() {
        return hasDeadline ? deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    @Override
    public MemorySegment buffer() {
        return buf;
    }

    @Override
    public long payloadOffset() {
        return frameOffset + FrameDescriptor.HEADER_LENGTH + metadataLength;
    }

    @Override
    public int payloadLength() {
        return payloadLength;
    }

    @Override
    public long attachmentOffset() {
        return frameOffset + FrameDescriptor.HEADER_LENGTH + metadataLength + payloadLength;
    }

    @Override
    public int attachmentLength() {
        return attachmentLength;
    }

    @Override
    public long requestBytes() {
        return (long) payloadLength + attachmentLength;
    }

    @Override
    public MemorySegment payload() {
        return buf.asSlice(payloadOffset(), payloadLength);
    }

    private void checkRespond() {
        if (buf == null) {
            throw new IllegalStateException("the call is over: respond only inside the raw handler");
        }
        if (responded) {
            throw new IllegalStateException("already responded");
        }
        responded = true;
    }

    @Override
    public void respond(MemorySegment src, long offset, int length) {
        checkRespond();
        lastStatus = ResponseWriter.writeBytes(writer, core, requestId, methodId, src, offset, length, responseAttachment,
                responseMetadata, this);
    }

    @Override
    public <T> void respond(Codec<T> codec, T value) {
        checkRespond();
        lastStatus = ResponseWriter.writeValue(writer, core, requestId, methodId, codec, value, responseAttachment,
                responseMetadata, this);
    }

    @Override
    public void respondError(Status status, String message) {
        ResponseWriter.requireSendable(status);
        checkRespond();
        lastStatus = ResponseWriter.writeError(writer, core, requestId, methodId, status, message, responseMetadata);
    }

    @Override
    public boolean responded() {
        return responded;
    }

    @Override
    public DeferredCall defer() {
        checkRespond();
        DeferredRawCall d;
        synchronized (spareDeferred) {
            d = spareDeferred.poll();
        }
        if (d == null) {
            d = new DeferredRawCall(connection);
        }
        connection.countCall();
        d.begin(requestId, methodId, hasDeadline, deadlineNanos, responseMetadata);
        lastStatus = Status.OK;
        return d;
    }

    /** A deferred call was answered: it is a spare for the next {@link #defer()} (any thread). */
    void spare(DeferredRawCall d) {
        synchronized (spareDeferred) {
            spareDeferred.push(d);
        }
    }
}
