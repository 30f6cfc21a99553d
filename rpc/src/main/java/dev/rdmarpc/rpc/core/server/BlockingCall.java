package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;

/**
 * A request copied out of the receive buffer, handled on a virtual thread. A stop interrupts that
 * thread while the handler runs; a call whose deadline passed before a thread took it does not run.
 */
final class BlockingCall extends HeldCall implements Runnable {
    private final PooledBuffer frame;
    private final int length;
    /** The request's metadata block, which starts the payload; 0 when none. */
    private final int metadataLength;
    // guarded by this: the handler's thread while the call is not over
    private Thread runner;

    BlockingCall(ServerConnection connection, MethodRegistry.Entry entry, PooledBuffer frame, int length,
                 boolean hasDeadline, long deadlineNanos, int metadataLength) {
        super(connection, entry, FrameHeader.requestId(frame.segment(), 0), FrameHeader.methodId(frame.segment(), 0),
                hasDeadline, deadlineNanos);
        this.frame = frame;
        this.length = length;
        this.metadataLength = metadataLength;
    }

    @Override
    public Metadata requestMetadata() {
        return metadataLength == 0 ? Metadata.EMPTY : Metadata.readFrom(frame.segment(), FrameDescriptor.HEADER_LENGTH);
    }

    @Override
    void interruptWork() {
        if (runner != null && runner != Thread.currentThread()) {
            runner.interrupt();
        }
    }

    @Override
    void stopped(boolean deadline) {
        // the handler's thread answers (DEADLINE_EXCEEDED) or not (a cancel) once the handler returns
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void run() {
        boolean timed = Events.serverCallEnabled();
        long start = timed ? System.nanoTime() : 0;
        ServerCore core = connection.core();
        Counters m = core.metrics;
        FrameWriter writer = connection.writer;
        Status status;
        synchronized (this) {
            runner = Thread.currentThread();
        }
        if (hasDeadline && System.nanoTime() - deadlineNanos >= 0) {
            stop(true); // it waited for a thread past its deadline: not started
        }
        if (hasDeadline) {
            InheritedDeadline.enter(deadlineNanos);
        }
        try {
            // the interceptors see every call as a pair, one stopped before it ran too (then it does not run)
            Throwable refused = core.beforeCall(this);
            if (refused != null) {
                status = end() ? stoppedStatus() : ResponseWriter.writeFailure(writer, core, id, mid, refused, responseMetadata());
            } else {
                status = decodeAndHandle(core, m, writer);
            }
            core.afterCall(this, status);
        } finally {
            leaveHandlerThread();
            frame.release();
            connection.callEnded(this);
        }
        if (timed) {
            Events.serverCall(entry.method().name(), mid, connection.peer(), status.name(), System.nanoTime() - start,
                    length, "BLOCKING");
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Status decodeAndHandle(ServerCore core, Counters m, FrameWriter writer) {
        MemorySegment seg = frame.segment();
        int plen = FrameHeader.payloadLength(seg, 0) - metadataLength;
        Object request;
        try {
            request = entry.method().requestCodec().decode(seg, FrameDescriptor.HEADER_LENGTH + metadataLength, plen);
        } catch (RuntimeException ex) {
            end();
            return ResponseWriter.writeError(writer, m, id, mid, Status.PROTOCOL_ERROR,
                    "request of " + entry.method().name() + " could not be decoded: " + ex.getMessage());
        }
        Object resp = null;
        Throwable failure = null;
        if (!isCancelled()) {
            try {
                resp = ((Handler) entry.handler()).handle(this, request);
            } catch (Throwable t) {
                failure = t;
            }
        }
        if (end()) {
            return stoppedStatus();
        }
        return failure != null
                ? ResponseWriter.writeFailure(writer, core, id, mid, failure, responseMetadata())
                : ResponseWriter.writeValue(writer, core, id, mid, entry.method().responseCodec(), resp, response,
                        responseMetadata(), this);
    }

    /** A call stopped first: answered DEADLINE_EXCEEDED for its deadline, nothing for a cancel. */
    private Status stoppedStatus() {
        Thread.interrupted(); // the stop's interrupt must not cut the response short
        return expired() ? answerExpired() : Status.CANCELLED;
    }

    @Override
    public Attachment requestAttachment() {
        MemorySegment seg = frame.segment();
        int plen = FrameHeader.payloadLength(seg, 0); // the metadata block included
        int alen = FrameHeader.attachmentLength(seg, 0);
        return alen == 0 ? Attachment.NONE : Attachment.of(seg.asSlice(FrameDescriptor.HEADER_LENGTH + plen, alen));
    }
}
