package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
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
    // guarded by this: the handler's thread while the call is not over
    private Thread runner;

    BlockingCall(ServerConnection connection, MethodRegistry.Entry entry, PooledBuffer frame, int length,
                 boolean hasDeadline, long deadlineNanos) {
        super(connection, entry, FrameHeader.requestId(frame.segment(), 0), FrameHeader.methodId(frame.segment(), 0),
                hasDeadline, deadlineNanos);
        this.frame = frame;
        this.length = length;
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
            MemorySegment seg = frame.segment();
            int plen = FrameHeader.payloadLength(seg, 0);
            Object request = null;
            boolean decoded = false;
            try {
                request = entry.method().requestCodec().decode(seg, FrameDescriptor.HEADER_LENGTH, plen);
                decoded = true;
            } catch (RuntimeException ex) {
                end();
                status = ResponseWriter.writeError(writer, m, id, mid, Status.PROTOCOL_ERROR,
                        "request of " + entry.method().name() + " could not be decoded: " + ex.getMessage());
            }
            if (decoded) {
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
                    Thread.interrupted(); // the stop's interrupt must not cut the response short
                    status = expired() ? answerExpired() : Status.CANCELLED; // a cancelled call: no response
                } else {
                    status = failure != null
                            ? ResponseWriter.writeError(writer, m, id, mid, ResponseWriter.statusOf(failure),
                                    ResponseWriter.messageOf(failure))
                            : ResponseWriter.writeValue(writer, core.maxFrameLength, m, id, mid,
                                    entry.method().responseCodec(), resp, response);
                }
            } else {
                status = Status.PROTOCOL_ERROR;
            }
        } finally {
            if (hasDeadline) {
                InheritedDeadline.exit();
            }
            if (end()) {
                Thread.interrupted();
            }
            frame.release();
            connection.callEnded(this);
        }
        if (timed) {
            Events.serverCall(entry.method().name(), mid, connection.peer(), status.name(), System.nanoTime() - start,
                    length, "BLOCKING");
        }
    }

    @Override
    public Attachment requestAttachment() {
        MemorySegment seg = frame.segment();
        int plen = FrameHeader.payloadLength(seg, 0);
        int alen = FrameHeader.attachmentLength(seg, 0);
        return alen == 0 ? Attachment.NONE : Attachment.of(seg.asSlice(FrameDescriptor.HEADER_LENGTH + plen, alen));
    }
}
