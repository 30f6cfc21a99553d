package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.ServerStream;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamHandler;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.core.StreamFlow;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;

/**
 * A streaming call on the server: its {@link StreamHandler} runs on a virtual thread, reading the
 * client's messages from a {@link StreamFlow} the I/O thread fills, and writing its own. Held by its
 * connection (by request id, like a blocking call) until the handler returns, so that a cancel, the
 * deadline or a close stops it: the handler's thread is interrupted and its stream's waits fail
 * with DEADLINE_EXCEEDED (the deadline) or CANCELLED (a cancel, a close).
 */
final class ServerStreamCall extends HeldStream implements Runnable, ServerStream<Object, Object> {
    /** The longest a send waits for the transport's progress before it tries its claim again. */
    private static final long SEND_ROOM_RECHECK_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10);

    /** Sends this stream's window updates (one object, not one per receive). */
    private final java.util.function.LongPredicate granter;
    /** What the flow's messages say this stream's messages are (built once, not per message). */
    private final String sendWhat;
    private final String receiveWhat;
    /** Where the stream's own waits give up: never (a deadline stops the call, which ends them). */
    private final long noDeadline = System.nanoTime() + (1L << 62);
    // guarded by this: the handler's thread while the call is not over
    private Thread runner;

    ServerStreamCall(ServerConnection connection, MethodRegistry.Entry entry, long id, int mid, boolean hasDeadline,
                     long deadlineNanos, Metadata requestMetadata) {
        super(connection, entry, id, mid, hasDeadline, deadlineNanos, requestMetadata);
        this.granter = this::writeWindow;
        this.sendWhat = "a message of " + entry.method().name();
        this.receiveWhat = "from the client of " + entry.method().name();
    }

    // ------------------------------------------------------------------ the I/O thread

    /** Grants the client this side's window beyond the initial one (at the start). */
    void grantInitial() {
        long grant = flow.grantNow();
        if (grant > 0 && !writeWindow(grant)) {
            flow.ungrant(grant);
        }
    }

    /** A message frame (or the half-close) of this stream arrived. */
    void onMessage(MemorySegment buf, long offset, int length) {
        if ((FrameHeader.flags(buf, offset) & FrameDescriptor.FLAG_END_STREAM) != 0) {
            flow.peerDone();
            return;
        }
        if (!flow.admit(length)) {
            return; // past the window: the stream failed (PROTOCOL_ERROR), the handler hears it
        }
        Object value;
        try {
            value = StreamMessages.decode(entry.method().requestCodec(), buf, offset);
        } catch (RuntimeException e) {
            flow.end(new RpcException(Status.PROTOCOL_ERROR,
                    "message of " + entry.method().name() + " could not be decoded: " + e.getMessage(), e), true);
            return;
        }
        flow.deliver(value, length);
    }

    /** The client granted more room. */
    void onWindow(int increment) {
        if (increment <= 0) {
            flow.end(new RpcException(Status.PROTOCOL_ERROR, "client sent a stream window update of " + increment), true);
            return;
        }
        flow.granted(increment);
    }

    // ------------------------------------------------------------------ HeldCall

    @Override
    void interruptWork() {
        // the stream's end first, so that the waits the interrupt wakes say why (under this call's lock: expired is set)
        flow.end(stopReason(), true);
        if (runner != null && runner != Thread.currentThread()) {
            runner.interrupt();
        }
    }

    @Override
    void stopped(boolean deadline) {
        flow.end(stopReason(), true);
    }

    private RpcException stopReason() {
        return expired() ? new RpcException(Status.DEADLINE_EXCEEDED, "the stream's deadline passed")
                : new RpcException(Status.CANCELLED, "the client cancelled the stream");
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void run() {
        ServerCore core = connection.core();
        FrameWriter writer = connection.writer;
        Status status;
        synchronized (this) {
            runner = Thread.currentThread();
        }
        if (hasDeadline && System.nanoTime() - deadlineNanos >= 0) {
            stop(true);
        }
        if (hasDeadline) {
            InheritedDeadline.enter(deadlineNanos);
        }
        try {
            // the interceptors see every stream as a pair, one stopped before it ran too (then it does not run)
            Throwable refused = core.beforeCall(this);
            Throwable failure = refused;
            if (refused == null && !isCancelled()) {
                try {
                    ((StreamHandler) entry.stream()).handle(this);
                } catch (Throwable t) {
                    failure = t;
                }
            }
            if (end()) {
                Thread.interrupted(); // the stop's interrupt must not cut the response short
                status = expired() ? answerExpired() : Status.CANCELLED;
            } else if (failure != null) {
                status = ResponseWriter.writeFailure(writer, core, id, mid, failure, responseMetadata());
            } else {
                status = ResponseWriter.writeValue(writer, core, id, mid, Codecs.VOID, null, Attachment.NONE,
                        responseMetadata(), null);
            }
            flow.end(null, true);
            core.afterCall(this, status);
        } finally {
            leaveHandlerThread();
            connection.callEnded(this);
        }
    }

    // ------------------------------------------------------------------ ServerStream

    @Override
    public Object receive() {
        Object m = flow.take(noDeadline, granter, receiveWhat);
        return m == StreamFlow.END ? null : m;
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void send(Object message) {
        StreamMessages.requireMessage(message);
        ServerCore core = connection.core();
        Codec codec = entry.method().responseCodec();
        int plen = codec.encodedSize(message);
        long frame = (long) FrameDescriptor.HEADER_LENGTH + plen;
        if (frame > core.maxFrameLength) {
            throw new RpcException(Status.PAYLOAD_TOO_LARGE, "message frame of " + frame
                    + " bytes exceeds the maximum frame length " + core.maxFrameLength);
        }
        flow.awaitSendWindow((int) frame, noDeadline, sendWhat);
        FrameWriter w = connection.writer;
        claim(w, (int) frame);
        w.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, id, mid, 0).payload(codec, message, plen);
        w.commit();
        core.metrics.bytesSent.add(frame);
    }

    /**
     * Claims a frame for this stream, waiting while the transport's send queue is full (a server
     * does not limit its unsent bytes by a high-water mark: the client's window bounds what one
     * stream queues) until the transport sends something.
     */
    private void claim(FrameWriter w, int frame) {
        while (true) {
            long seen = connection.sendProgress();
            long at = w.claim(frame);
            if (at >= 0) {
                return;
            }
            if (at == Connection.CLOSED) {
                throw new RpcException(Status.CONNECTION_CLOSED, "the client's connection closed");
            }
            if (at == Connection.NO_BUFFER) {
                throw new RpcException(Status.RESOURCE_EXHAUSTED, "server buffer pool exhausted");
            }
            if (isCancelled()) {
                throw expired() ? new RpcException(Status.DEADLINE_EXCEEDED, "the stream's deadline passed")
                        : new RpcException(Status.CANCELLED, "the client cancelled the stream");
            }
            try {
                connection.awaitSendProgress(seen, SEND_ROOM_RECHECK_NANOS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw expired() ? new RpcException(Status.DEADLINE_EXCEEDED, "the stream's deadline passed")
                        : new RpcException(Status.CANCELLED, "interrupted while waiting for room to send");
            }
        }
    }

    /** Grants the client {@code increment} more bytes; never waits. @return false when it cannot be sent now */
    private boolean writeWindow(long increment) {
        if (!connection.writer.windowUpdate(id, mid, increment)) {
            return false;
        }
        connection.core().metrics.bytesSent.add(FrameWriter.WINDOW_FRAME_LENGTH);
        return true;
    }
}
