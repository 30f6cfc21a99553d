package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.AsyncClientStream;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamListener;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.AsyncStreamIo;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.MetadataLimits;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;

/**
 * The streams of one client connection: opening them (each holds a call slot of the connection's
 * {@link CallTable} from its opening until the server's response ends it), writing their frames
 * (blocking streams wait their turn for room in the send queue, asynchronous ones never wait), and the
 * stream frames that arrive.
 */
final class ClientStreams {
    /** A stream without a deadline gets one this far away (about 146 years: never, and no overflow). */
    static final long NO_DEADLINE_NANOS = 1L << 62;

    private final ClientCore core;
    private final CallLimits limits;
    private final CallTable table;
    private final SendRoom sendRoom;
    private final Counters metrics;
    private final long sendHighWaterMark;
    /** What each stream may have unread here: its receive window. */
    private final int windowBytes;
    /** Asynchronous streams waiting for room in the send queue; told on the transport's progress. */
    private final ConcurrentLinkedQueue<ClientStreamSink> roomWaiters = new ConcurrentLinkedQueue<>();

    ClientStreams(ClientCore core, CallLimits limits, CallTable table, SendRoom sendRoom, Counters metrics,
                  long sendHighWaterMark, int windowBytes) {
        this.core = core;
        this.limits = limits;
        this.table = table;
        this.sendRoom = sendRoom;
        this.metrics = metrics;
        this.sendHighWaterMark = sendHighWaterMark;
        this.windowBytes = windowBytes;
    }

    /** @return the connection the streams' frames come on (a holding codec may keep them there) */
    Connection connection() {
        return core.writer().connection();
    }

    /** @see ClientCore#openStream(Method, long, Metadata, StreamEnd) */
    <Q, R> ClientStream<Q, R> open(Method<Q, R> method, long timeoutNanos, Metadata metadata,
                                   StreamEnd onEnd) {
        limits.checkMetadata(metadata);
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        FrameWriter w = core.writer();
        Connection c = w.connection();
        if (c.inEventLoop()) {
            throw new IllegalStateException("a stream on the client's own I/O thread would wait for itself");
        }
        long timeout = limits.inheritTimeout(timeoutNanos > 0 ? timeoutNanos : Long.MAX_VALUE);
        long now = System.nanoTime();
        long deadline = now + (timeout == Long.MAX_VALUE ? NO_DEADLINE_NANOS : timeout);
        long slotWait = now + Math.min(timeout, core.defaultTimeoutNanos());
        ClientStreamCall<Q, R> s = new ClientStreamCall<>(this, method, windowBytes, deadline);
        s.onEnd(onEnd);
        long id = table.reserveWaiting(s, method, frame, slotWait, deadline);
        if (id < 0) {
            metrics.rejected.increment();
            metrics.errors.increment();
            throw CallLimits.overloaded();
        }
        s.id = id;
        claimOpening(c, id, frame, slotWait, timeout);
        w.request(id, method.id(), timeout).metadata(metadata).flag(FrameDescriptor.FLAG_STREAM)
                .payload(MemorySegment.NULL, 0, 0);
        w.commit();
        metrics.calls.increment();
        metrics.bytesSent.add(frame);
        grantBeyondInitialWindow(s);
        return s;
    }

    /** Claims a blocking stream's opening frame, waiting its turn for room until {@code slotWait}. */
    private void claimOpening(Connection c, long id, int frame, long slotWait, long timeout) {
        FrameWriter w = core.writer();
        boolean refused = false;
        Condition turn = null;
        try {
            while (true) {
                if (sendRoom.mustWait(c, refused, turn)) {
                    turn = sendRoom.awaitSendRoom(c, slotWait, refused, turn);
                    if (turn == null) {
                        table.release(id);
                        metrics.errors.increment();
                        throw sendRoom.full(c, timeout);
                    }
                }
                long off = w.claim(frame, sendHighWaterMark);
                if (off >= 0) {
                    return;
                }
                if (off != Connection.BACK_PRESSURED) {
                    if (!core.claimFailed(c, id, off)) {
                        throw sendRoom.full(c, 0);
                    }
                    throw core.errorOnceClosed(c);
                }
                refused = true;
            }
        } finally {
            sendRoom.leave(turn);
        }
    }

    /** This side's window beyond the initial one, granted at once. */
    private void grantBeyondInitialWindow(ClientStreamSink s) {
        long grant = s.flow().grantNow();
        if (grant > 0 && !writeWindow(s, grant)) {
            s.flow().ungrant(grant);
        }
    }

    /** @see ClientCore#openAsyncStream */
    <Q, R> AsyncClientStream<Q, R> openAsync(Method<Q, R> method, long timeoutNanos, Metadata metadata,
                                             StreamListener<? super R> listener, Executor executor,
                                             StreamEnd onEnd) {
        AsyncClientStreamCall<Q, R> s = new AsyncClientStreamCall<>(this, method, windowBytes, listener, executor, onEnd);
        openAsync(s, timeoutNanos, metadata);
        return s;
    }

    /**
     * Opens an asynchronous stream without waiting: takes a free call slot (OVERLOADED when none is
     * free now) and queues the opening frame, which goes at once when the send queue has room.
     *
     * @param timeoutNanos the stream's timeout, {@link Long#MAX_VALUE} for none
     * @throws RpcException CONNECTION_CLOSED, OVERLOADED (no free slot), PAYLOAD_TOO_LARGE (metadata)
     */
    void openAsync(AsyncClientStreamCall<?, ?> s, long timeoutNanos, Metadata metadata) {
        limits.checkMetadata(metadata);
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        long timeout = limits.inheritTimeout(timeoutNanos > 0 ? timeoutNanos : Long.MAX_VALUE);
        long deadline = System.nanoTime() + (timeout == Long.MAX_VALUE ? NO_DEADLINE_NANOS : timeout);
        s.deadline(deadline);
        long id = table.reserveUntil(s, s.method(), frame, deadline);
        if (id < 0) {
            metrics.rejected.increment();
            metrics.errors.increment();
            throw CallLimits.overloaded();
        }
        s.id = id;
        metrics.calls.increment();
        s.open(metadata, timeout == Long.MAX_VALUE);
    }

    /** Writes an asynchronous stream's opening frame and its first grant; never waits. */
    int writeAsyncOpen(ClientStreamSink s, Metadata metadata, boolean noDeadline, long deadline) {
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        long left = noDeadline ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0) {
            return AsyncStreamIo.GONE; // its deadline passed while it waited to open: the sweep ends it
        }
        int r = asyncClaim(s, frame);
        if (r != AsyncStreamIo.WROTE) {
            return r;
        }
        FrameWriter w = core.writer();
        w.request(s.id, s.method().id(), left).metadata(metadata).flag(FrameDescriptor.FLAG_STREAM)
                .payload(MemorySegment.NULL, 0, 0);
        w.commit();
        metrics.bytesSent.add(frame);
        grantBeyondInitialWindow(s);
        return AsyncStreamIo.WROTE;
    }

    /** Writes an asynchronous stream's message if the send queue has room; never waits. */
    <T> int writeAsyncMessage(ClientStreamSink s, Codec<T> codec, T value, int plen) {
        int r = asyncClaim(s, FrameDescriptor.HEADER_LENGTH + plen);
        if (r == AsyncStreamIo.WROTE) {
            writeMessageClaimed(s, codec, value, plen);
        }
        return r;
    }

    /** Writes an asynchronous stream's half-close if the send queue has room; never waits. */
    int writeAsyncEnd(ClientStreamSink s) {
        int r = asyncClaim(s, FrameDescriptor.HEADER_LENGTH);
        if (r == AsyncStreamIo.WROTE) {
            writeEndClaimed(s);
        }
        return r;
    }

    /** Claims a frame as an asynchronous call does (room under the high-water mark, whoever waits). */
    private int asyncClaim(ClientStreamSink s, int frame) {
        long off = core.writer().claim(frame, sendHighWaterMark);
        if (off >= 0) {
            return AsyncStreamIo.WROTE;
        }
        if (off == Connection.BACK_PRESSURED) {
            return AsyncStreamIo.NO_ROOM;
        }
        if (off == Connection.NO_BUFFER) {
            failed(s, CallLimits.noSendBuffer());
        }
        return AsyncStreamIo.GONE; // closed: the close fails the stream
    }

    /** {@code s} waits for room in the send queue: {@link ClientStreamSink#onRoom} once the transport sent something. */
    void awaitRoom(ClientStreamSink s) {
        roomWaiters.add(s);
    }

    /** The transport sent something (I/O thread): the asynchronous streams waiting for room write. */
    void onRoom() {
        if (roomWaiters.isEmpty()) {
            return;
        }
        for (int n = roomWaiters.size(); n > 0; n--) {
            ClientStreamSink s = roomWaiters.poll();
            if (s == null) {
                return;
            }
            s.onRoom();
        }
    }

    void checkFrame(long frame) {
        limits.checkFrame(frame);
    }

    /** Writes a stream's message, waiting for room in the send queue until {@code deadline}. */
    <T> void writeMessage(ClientStreamSink s, Codec<T> codec, T value, int plen, long deadline) {
        claimWaiting(FrameDescriptor.HEADER_LENGTH + plen, deadline);
        writeMessageClaimed(s, codec, value, plen);
    }

    /** Writes a stream's half-close, waiting for room in the send queue until {@code deadline}. */
    void writeEnd(ClientStreamSink s, long deadline) {
        claimWaiting(FrameDescriptor.HEADER_LENGTH, deadline);
        writeEndClaimed(s);
    }

    private <T> void writeMessageClaimed(ClientStreamSink s, Codec<T> codec, T value, int plen) {
        FrameWriter w = core.writer();
        w.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), 0).payload(codec, value, plen);
        w.commit();
        metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH + plen);
    }

    private void writeEndClaimed(ClientStreamSink s) {
        core.writer().stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), FrameDescriptor.FLAG_END_STREAM)
                .commit();
        metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH);
    }

    /**
     * Grants the server {@code increment} more bytes of the stream's messages; never waits.
     *
     * @return false when it cannot be sent now (the caller owes it still); true when sent, or when
     *         the connection is closed (nothing is owed any more)
     */
    boolean writeWindow(ClientStreamSink s, long increment) {
        if (!core.writer().windowUpdate(s.id, s.method().id(), increment)) {
            return false;
        }
        metrics.bytesSent.add(FrameWriter.WINDOW_FRAME_LENGTH);
        return true;
    }

    /** Claims a frame of a stream in the writer, waiting its turn for room until {@code deadline}. */
    private void claimWaiting(int frame, long deadline) {
        FrameWriter w = core.writer();
        Connection c = w.connection();
        boolean refused = false;
        Condition turn = null;
        try {
            while (true) {
                if (sendRoom.mustWait(c, refused, turn)) {
                    turn = sendRoom.awaitSendRoom(c, deadline, refused, turn);
                    if (turn == null) {
                        metrics.errors.increment();
                        throw new RpcException(Status.DEADLINE_EXCEEDED, "the send queue stayed full until the stream's deadline");
                    }
                }
                long off = w.claim(frame, sendHighWaterMark);
                if (off >= 0) {
                    return;
                }
                if (off == Connection.CLOSED) {
                    metrics.errors.increment();
                    throw core.errorOnceClosed(c);
                }
                if (off == Connection.NO_BUFFER) {
                    metrics.errors.increment();
                    throw CallLimits.noSendBuffer();
                }
                refused = true;
            }
        } finally {
            sendRoom.leave(turn);
        }
    }

    /** A stream's message or window frame arrived (I/O thread). */
    void onFrame(int type, MemorySegment buf, long offset, int length) {
        metrics.bytesReceived.add(length);
        Object sink = table.sink(FrameHeader.requestId(buf, offset));
        if (!(sink instanceof ClientStreamSink s)) {
            return; // a stream that ended here (cancelled, timed out): its late frames are dropped
        }
        table.touch(System.nanoTime());
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE) {
            s.onMessage(buf, offset, length);
            return;
        }
        int increment = StreamMessages.increment(buf, offset);
        if (increment <= 0) {
            failed(s, new RpcException(Status.PROTOCOL_ERROR, "server sent a stream window update of " + increment));
            return;
        }
        s.onWindow(increment);
    }

    /**
     * Stream {@code id}'s deadline passed and the caller ended it here: frees its slot without telling
     * the server, which stops it at the same deadline ({@code DEADLINE_EXCEEDED}, not a cancel).
     */
    void expired(long id) {
        if (table.release(id)) {
            metrics.timeouts.increment();
            metrics.errors.increment();
        }
    }

    /** The caller cancelled stream {@code id}: its slot is free at once and the server is told. */
    void cancel(long id) {
        core.cancel(id);
    }

    /** A stream failed here for the server's fault: it ends with {@code error}, and the server is sent a cancel. */
    void failed(ClientStreamSink s, RpcException error) {
        metrics.errors.increment();
        s.failed(error);
        core.cancel(s.id);
    }
}
