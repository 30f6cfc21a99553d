package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.AsyncServerStream;
import dev.rdmarpc.rpc.AsyncStreamHandler;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamListener;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.core.AsyncStreamIo;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.core.StreamFlow;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A streaming call served by an {@link AsyncStreamHandler}: no thread of its own. The handler runs
 * on the I/O thread when the stream opens; the client's messages go from the I/O thread through the
 * {@link StreamFlow} to the handler's listener as it requests them; what it sends is written at
 * once or waits in the outbox for the client's window or the send queue. Held by its connection
 * like any {@link HeldCall}, so a cancel, the deadline or a close stops it (the listener's
 * {@code onEnd} says so); its own {@link #close} or {@link #fail} ends it after what is queued.
 */
final class AsyncServerStreamCall extends HeldStream implements AsyncServerStream<Object, Object> {
    /** The handler's end of the call, queued behind its messages. */
    private record End(Throwable failure, Metadata trailers) {
    }

    private final Io io;
    private volatile boolean closing;
    private boolean endWritten; // guarded by this

    AsyncServerStreamCall(ServerConnection connection, MethodRegistry.Entry entry, long id, int mid, boolean hasDeadline,
                          long deadlineNanos, Metadata requestMetadata) {
        super(connection, entry, id, mid, hasDeadline, deadlineNanos, requestMetadata);
        this.io = new Io(flow);
    }

    // ------------------------------------------------------------------ the I/O thread

    /** Grants the client this side's window, then runs the handler's {@code open} (I/O thread). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void start() {
        long grant = flow.grantNow();
        if (grant > 0 && !io.writeGrant(grant)) {
            flow.ungrant(grant);
        }
        if (hasDeadline && System.nanoTime() - deadlineNanos >= 0) {
            stop(true);
            return;
        }
        if (hasDeadline) {
            InheritedDeadline.enter(deadlineNanos);
        }
        try {
            Throwable refused = connection.core().beforeCall(this);
            if (refused != null) {
                fail(refused);
                return;
            }
            StreamListener<Object> l = ((AsyncStreamHandler) entry.stream()).open(this);
            io.listener(Objects.requireNonNull(l, "the stream handler of " + entry.method().name() + " returned no listener"));
        } catch (Throwable t) {
            fail(t);
            return;
        } finally {
            if (hasDeadline) {
                InheritedDeadline.exit();
            }
        }
        io.flush(); // ready at the start: onReady
        io.signal();
    }

    /** A message frame (or the half-close) of this stream arrived. */
    void onMessage(MemorySegment buf, long offset, int length) {
        if ((FrameHeader.flags(buf, offset) & FrameDescriptor.FLAG_END_STREAM) != 0) {
            flow.peerDone();
            io.signal();
            return;
        }
        if (!flow.admit(length)) {
            RpcException f = flow.failure();
            if (f != null && !flow.isEnded()) {
                abort(f); // past its window: the client hears PROTOCOL_ERROR
            }
            return;
        }
        Object value;
        try {
            value = StreamMessages.decode(entry.method().requestCodec(), buf, offset, connection.connection);
        } catch (RuntimeException e) {
            abort(new RpcException(Status.PROTOCOL_ERROR,
                    "message of " + entry.method().name() + " could not be decoded: " + e.getMessage(), e));
            return;
        }
        flow.deliver(value, length);
        io.signal();
    }

    /** The client granted more room. */
    void onWindow(int increment) {
        if (increment <= 0) {
            abort(new RpcException(Status.PROTOCOL_ERROR, "client sent a stream window update of " + increment));
            return;
        }
        flow.granted(increment);
        io.flush();
    }

    /** The transport sent something: write what waits for room. */
    void onRoom() {
        io.onRoom();
    }

    // ------------------------------------------------------------------ HeldCall

    @Override
    void interruptWork() {
        // nothing runs: the listener hears the stop once the lock is let go
    }

    @Override
    void stopped(boolean deadline) {
        RpcException reason = deadline ? new RpcException(Status.DEADLINE_EXCEEDED, "the stream's deadline passed")
                : new RpcException(Status.CANCELLED, "the client cancelled the stream or went away");
        flow.end(reason, true);
        io.dropOutbox();
        endStopped(deadline);
        io.signal();
    }

    // ------------------------------------------------------------------ AsyncServerStream

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void send(Object message) {
        StreamMessages.requireMessage(message);
        if (closing) {
            throw new IllegalStateException("send after close");
        }
        ServerCore core = connection.core();
        int plen = ((Codec) entry.method().responseCodec()).encodedSize(message);
        long frame = (long) FrameDescriptor.HEADER_LENGTH + plen;
        if (frame > core.maxFrameLength) {
            throw new RpcException(Status.PAYLOAD_TOO_LARGE, "message frame of " + frame
                    + " bytes exceeds the maximum frame length " + core.maxFrameLength);
        }
        io.send(message, plen);
    }

    @Override
    public boolean isReady() {
        return !closing && io.isReady();
    }

    @Override
    public void request(int n) {
        io.request(n);
    }

    @Override
    public void close(Metadata trailers) {
        end(null, Objects.requireNonNull(trailers, "trailers"));
    }

    @Override
    public void fail(Throwable failure) {
        end(Objects.requireNonNull(failure, "failure"), responseMetadata());
    }

    private void end(Throwable failure, Metadata trailers) {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        io.queueMarker(new End(failure, trailers));
    }

    /**
     * Ends the call with {@code failure} now, dropping what is queued (the client broke the
     * protocol, a message could not be encoded, the listener threw).
     */
    private void abort(Throwable failure) {
        synchronized (this) {
            closing = true;
        }
        io.dropOutbox();
        writeEnd(new End(failure, Metadata.EMPTY));
    }

    /** Writes the call's end (its turn in the outbox came); the listener hears it after. */
    @SuppressWarnings("rawtypes")
    private int writeEnd(End e) {
        synchronized (this) {
            if (endWritten) {
                return AsyncStreamIo.GONE;
            }
            endWritten = true;
        }
        if (end()) {
            return AsyncStreamIo.GONE; // stopped first: answered (or not) then
        }
        ServerCore core = connection.core();
        Status status = Status.HANDLER_FAILED;
        try {
            if (e.failure() != null) {
                status = ResponseWriter.writeFailure(connection.writer, core, id, mid, e.failure(), e.trailers());
            } else {
                status = ResponseWriter.writeValue(connection.writer, core, id, mid, (Codec) Codecs.VOID, null,
                        Attachment.NONE, e.trailers(), null);
            }
        } finally {
            connection.callEnded(this);
            core.afterCall(this, status);
        }
        RpcException told = status == Status.OK ? null : new RpcException(status, e.failure() == null
                ? "the stream's end could not be sent" : String.valueOf(e.failure().getMessage()));
        flow.end(told, true);
        io.signal();
        return AsyncStreamIo.GONE; // nothing goes after the end
    }

    /** The outbox and the listener of this stream, written on the connection. */
    private final class Io extends AsyncStreamIo {
        Io(StreamFlow flow) {
            super(flow, null);
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        protected int writeMessage(Object value, int plen) {
            int frame = FrameDescriptor.HEADER_LENGTH + plen;
            FrameWriter w = connection.writer;
            long at = w.claim(frame);
            if (at < 0) {
                return claimFailed(at);
            }
            try {
                w.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, id, mid, 0).payload((Codec) entry.method().responseCodec(),
                        value, plen);
            } catch (RuntimeException e) { // the codec failed: the writer aborted the claim
                abort(new RpcException(Status.HANDLER_FAILED, "a message of " + entry.method().name()
                        + " could not be encoded: " + e, e));
                return GONE;
            }
            w.commit();
            connection.core().metrics.bytesSent.add(frame);
            return WROTE;
        }

        private int claimFailed(long at) {
            if (at == Connection.CLOSED) {
                return GONE; // the close stops the call
            }
            if (at == Connection.NO_BUFFER) {
                return NO_ROOM; // a buffer comes back as the transport sends
            }
            return NO_ROOM;
        }

        @Override
        protected int writeMarker(Object marker) {
            return writeEnd((End) marker);
        }

        @Override
        protected boolean writeGrant(long increment) {
            if (!connection.writer.windowUpdate(id, mid, increment)) {
                return false;
            }
            connection.core().metrics.bytesSent.add(FrameWriter.WINDOW_FRAME_LENGTH);
            return true;
        }

        @Override
        protected void awaitRoom() {
            connection.awaitRoom(AsyncServerStreamCall.this);
        }

        @Override
        protected Metadata endMetadata() {
            return Metadata.EMPTY;
        }

        @Override
        protected void listenerFailed(RuntimeException e) {
            abort(e);
        }
    }
}
