package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.AsyncClientStream;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamListener;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.DeviceAttachments;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.InheritedDeadline;
import dev.rdmarpc.rpc.core.MetadataLimits;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;

/**
 * The client side of one connection, as the channel uses it: starts calls and streams on it. Its
 * parts: the {@link CallTable} of outstanding calls (ids, slots, deadlines), the {@link SendRoom}
 * where blocking callers wait their turn for room in the send queue, the {@link ClientStreams}, and the
 * {@link ClientConnection} that the transport hands the connection's frames, ticks and close
 * ({@link #frameHandler}).
 *
 * <p>A call takes the table's lock twice (reserve, complete) and allocates nothing on the
 * {@link #send} path.
 */
public final class ClientCore {
    private static final System.Logger LOG = System.getLogger(ClientCore.class.getName());
    /** Most calls a connection can have outstanding (the slot field's range). */
    public static final int MAX_OUTSTANDING = CallTable.MAX_OUTSTANDING;
    /** The default of {@code streamWindowBytes}: 1 MiB. */
    public static final int DEFAULT_STREAM_WINDOW_BYTES = 1 << 20;
    /** A stream without a deadline gets one this far away (about 146 years: never, and no overflow). */
    public static final long NO_DEADLINE_NANOS = ClientStreams.NO_DEADLINE_NANOS;

    private final Counters metrics;
    private final long defaultTimeoutNanos;
    private final long sendHighWaterMark;
    private final String transportName;
    /** What a call is checked against before it takes a slot. */
    private final CallLimits limits;
    /** Run around every typed call (by the channel), in this order. */
    private final ClientInterceptor[] interceptors;
    private final CallTable table;
    private final SendRoom sendRoom;
    private final ClientStreams streams;
    private final ClientConnection dispatch;
    private volatile Connection connection;
    /** Writes this connection's requests; set with {@link #connection} by {@link #attach}. */
    private volatile FrameWriter writer;

    /**
     * @param metrics             counters to update (shared by a pool's connections)
     * @param capacity            most outstanding calls, in [1, {@link #MAX_OUTSTANDING}]
     * @param maxFrameLength      largest frame sent or accepted
     * @param defaultTimeoutNanos timeout of calls that set none
     * @param sendHighWaterMark   bytes queued unsent above which calls are refused as overloaded
     * @param transportName       for events and logs
     * @param maxMetadataBytes    most bytes of metadata a frame may carry, either way
     * @param interceptors        run around every typed call, in this order
     */
    public ClientCore(Counters metrics, int capacity, int maxFrameLength, long defaultTimeoutNanos,
                      long sendHighWaterMark, String transportName, int maxMetadataBytes,
                      List<ClientInterceptor> interceptors) {
        this(metrics, capacity, maxFrameLength, defaultTimeoutNanos, sendHighWaterMark, transportName, maxMetadataBytes,
                interceptors, DEFAULT_STREAM_WINDOW_BYTES);
    }

    /**
     * @param streamWindowBytes what each stream may have unread here (see {@code RpcBuilder.streamWindowBytes})
     * @see #ClientCore(Counters, int, int, long, long, String, int, List)
     */
    public ClientCore(Counters metrics, int capacity, int maxFrameLength, long defaultTimeoutNanos,
                      long sendHighWaterMark, String transportName, int maxMetadataBytes,
                      List<ClientInterceptor> interceptors, int streamWindowBytes) {
        this.table = new CallTable(metrics, capacity);
        this.metrics = metrics;
        this.defaultTimeoutNanos = defaultTimeoutNanos;
        this.sendHighWaterMark = sendHighWaterMark;
        this.transportName = transportName;
        this.limits = new CallLimits(metrics, maxFrameLength, maxMetadataBytes);
        this.interceptors = interceptors.toArray(new ClientInterceptor[0]);
        this.sendRoom = new SendRoom(table, metrics, sendHighWaterMark);
        this.streams = new ClientStreams(this, limits, table, sendRoom, metrics, sendHighWaterMark, streamWindowBytes);
        this.dispatch = new ClientConnection(table, sendRoom, streams, metrics, transportName, maxMetadataBytes);
    }

    /** @return the interceptors the channel runs around this connection's typed calls, in order */
    public ClientInterceptor[] interceptors() {
        return interceptors;
    }

    /** @return what the transport tells of this connection: its frames, ticks, progress and close */
    public FrameHandler frameHandler() {
        return dispatch;
    }

    /**
     * Binds the connection this core serves; call once, right after the transport connected.
     *
     * @param c the connection
     */
    public void attach(Connection c) {
        this.writer = new FrameWriter(c);
        this.connection = c;
        // idle from now, not from before the connect: the connect itself (seconds for RDMA under
        // emulation) is not idle time. (A connection the pool picked for a call is kept open by the
        // pick's claim until the call holds its slot, see claim().)
        table.touch(System.nanoTime());
        metrics.connectionsOpened.increment();
        Events.opened(transportName, "client", c.localAddress(), c.remoteAddress());
        LOG.log(System.Logger.Level.DEBUG, "connected {0} -> {1}", c.localAddress(), c.remoteAddress());
    }

    /** @param r run once after the connection closed (a pool drops the connection) */
    public void onClosed(Runnable r) {
        dispatch.onClosed(r);
    }

    /** @return the connection, null before {@link #attach} */
    public Connection connection() {
        return connection;
    }

    FrameWriter writer() {
        return writer;
    }

    /** @return the peer's address */
    public InetSocketAddress remoteAddress() {
        return connection.remoteAddress();
    }

    /** @return true while the connection is open */
    public boolean isOpen() {
        Connection c = connection;
        return c != null && c.isOpen() && !table.isClosed();
    }

    /** @return calls outstanding now */
    public int outstanding() {
        return table.outstanding();
    }

    /**
     * @return the request bytes of the calls outstanding now (frames, headers included), read without
     *         the lock: a hint for load balancing
     */
    public long outstandingBytesHint() {
        return table.outstandingBytesHint();
    }

    /** @return calls outstanding now, read without the lock (a hint for load balancing) */
    public int outstandingHint() {
        return table.outstandingHint();
    }

    /** @return the table's capacity */
    public int capacity() {
        return table.capacity();
    }

    /** @return {@link System#nanoTime()} of the last call started or completed */
    public long lastActivityNanos() {
        return table.lastActivityNanos();
    }

    /** A pool handed this connection to a call about to start here: it is not idle until {@link #unclaim}. */
    public void claim() {
        table.claim();
    }

    /** The call {@link #claim} was for has started here (it holds a slot) or failed to. */
    public void unclaim() {
        table.unclaim();
    }

    /**
     * Closes the connection when it is idle: no call outstanding or claimed, and none started or
     * completed since {@code idleSince} (a {@link System#nanoTime()}). The check and the close are one
     * step under the slot lock, so a call either took its slot first and keeps the connection open, or
     * finds it closed before it is sent ({@link Status#CONNECTION_CLOSED}, which a pool retries
     * elsewhere); a call never fails after it started because the connection was idle.
     *
     * @return true when it closed the connection
     */
    public boolean closeIfIdleSince(long idleSince) {
        if (!table.closeIfIdleSince(idleSince)) {
            return false;
        }
        close();
        return true;
    }

    /**
     * Closes the connection and waits (up to 5 s) until every pending call has been failed.
     */
    public void close() {
        Connection c = connection;
        if (c != null) {
            c.close(null);
            dispatch.awaitClosed(5);
        }
    }

    // ================================================================== calls

    /**
     * The zero-allocation call (see {@code RpcChannel.send}).
     *
     * @param attachment   host bytes sent after the payload, or {@link MemorySegment#NULL}
     * @param timeoutNanos the call's timeout, or 0 for the default
     * @return true when sent, false when back-pressured
     */
    public boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                        long timeoutNanos, ResponseListener listener, long tag) {
        return send(method, payload, metadata, attachment, timeoutNanos, listener, tag, false);
    }

    /**
     * The zero-copy call (see {@code RpcChannel.sendInPlace}): the transport may write
     * {@code payload} from the caller's memory; the listener hears only once the transport no longer
     * reads it.
     *
     * @return true when sent, false when back-pressured
     */
    public boolean sendInPlace(Method<?, ?> method, MemorySegment payload, long timeoutNanos, ResponseListener listener,
                               long tag) {
        return send(method, payload, Metadata.EMPTY, MemorySegment.NULL, timeoutNanos, listener, tag, true);
    }

    private boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                         long timeoutNanos, ResponseListener listener, long tag, boolean payloadInPlace) {
        limits.checkMetadata(metadata);
        long plen = payload.byteSize();
        long alen = attachment.byteSize();
        long frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata) + plen + alen;
        limits.checkFrame(frame);
        FrameWriter w = writer;
        if (w.connection().pendingBytes() >= sendHighWaterMark) {
            metrics.rejected.increment();
            return false;
        }
        long timeout = limits.inheritTimeout(effectiveTimeout(timeoutNanos));
        long id = table.reserve(listener, tag, method, (int) frame, timeout, payloadInPlace);
        if (id < 0) {
            metrics.rejected.increment();
            return false;
        }
        long off = payloadInPlace ? w.claimPayloadInPlace((int) frame, payload, sendHighWaterMark, id)
                : alen > 0 ? w.claimAttachmentInPlace((int) frame, attachment, sendHighWaterMark)
                : w.claim((int) frame, sendHighWaterMark);
        if (off < 0) {
            return claimFailed(w.connection(), id, off);
        }
        try {
            w.request(id, method.id(), timeout).metadata(metadata).payload(payload, 0, (int) plen).attachment(attachment);
        } catch (Throwable t) {
            table.release(id);
            throw t;
        }
        w.commit();
        metrics.calls.increment();
        metrics.bytesSent.add(frame);
        return true;
    }

    /**
     * A typed call completing a future, whose response attachment lands in {@code responseTarget}.
     *
     * @param attachment     the request attachment, host or device memory
     * @param responseTarget where the response attachment goes, or null for a heap copy
     * @param timeoutNanos   the call's timeout, or 0 for the default
     * @param kind           whether the caller waits, and whether the call completes with a {@link Reply}
     * @param metadata       the request's metadata
     * @return the call; completed already when it failed before it was sent (OVERLOADED)
     * @throws RpcException when the call cannot start: CONNECTION_CLOSED, PAYLOAD_TOO_LARGE, RESOURCE_EXHAUSTED
     */
    public <Q, R> PendingCall start(Method<Q, R> method, Q request, Attachment attachment, Attachment responseTarget,
                                    long timeoutNanos, CallKind kind, Metadata metadata) {
        boolean wait = kind.blocking();
        DeviceAttachments.validate(attachment);
        if (responseTarget != null) {
            DeviceAttachments.validate(responseTarget);
        }
        limits.checkMetadata(metadata);
        Codec<Q> codec = method.requestCodec();
        int plen = codec.encodedSize(request);
        long frame = (long) FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata) + plen
                + attachment.length();
        limits.checkFrame(frame);
        FrameWriter w = writer;
        if (wait && w.connection().inEventLoop()) {
            throw new IllegalStateException("a blocking call on the client's own I/O thread would wait for itself;"
                    + " use callAsync or send there");
        }
        long timeout = limits.inheritTimeout(effectiveTimeout(timeoutNanos));
        PendingCall call = new PendingCall(this, method, kind.reply(), responseTarget, timeout);
        long waitDeadline = System.nanoTime() + timeout;
        long id = claimCall(call, w, (int) frame, attachment, wait, timeout, waitDeadline);
        if (id < 0) {
            return call; // failed before it was sent
        }
        call.requestBytes((long) plen + attachment.length()); // before the response can complete it
        try {
            w.request(id, method.id(), waitDeadline - System.nanoTime()).metadata(metadata).payload(codec, request, plen)
                    .attachment(attachment);
            w.commit(attachment);
        } catch (Throwable t) {
            table.release(id);
            throw t;
        }
        metrics.calls.increment();
        metrics.bytesSent.add(frame);
        return call;
    }

    /**
     * Takes a slot for {@code call} and claims its frame in the writer: a blocking call waits its turn
     * for a slot and room until {@code waitDeadline}, an asynchronous one goes when there is room,
     * whoever waits. An attachment in memory the transport registered goes without a copy (RDMA): host
     * memory, or GPU memory registered through its NicRegistrar; else it is copied (a GPU one is staged).
     *
     * @return the call's id, claimed; or -1 when the call has failed already (completed exceptionally)
     */
    private long claimCall(PendingCall call, FrameWriter w, int frame, Attachment attachment, boolean wait,
                           long timeout, long waitDeadline) {
        Connection c = w.connection();
        boolean refused = false;
        Condition turn = null; // this call's place among the callers waiting for send room, once it waits
        try {
            while (true) {
                if (wait ? sendRoom.mustWait(c, refused, turn) : c.pendingBytes() >= sendHighWaterMark) {
                    if (!wait || (turn = sendRoom.awaitSendRoom(c, waitDeadline, refused, turn)) == null) {
                        return refuse(call, sendRoom.full(c, wait ? timeout : 0));
                    }
                }
                long id = wait ? table.reserveWaiting(call, call.method(), frame, waitDeadline, waitDeadline)
                        : table.reserve(call, 0, call.method(), frame, timeout, false);
                call.id = id;
                if (id < 0) {
                    return refuse(call, CallLimits.overloaded());
                }
                long off = attachment.length() > 0 ? w.claimAttachmentInPlace(frame, attachment, sendHighWaterMark)
                        : w.claim(frame, sendHighWaterMark);
                if (off >= 0) {
                    return id;
                }
                if (off == Connection.BACK_PRESSURED && wait) {
                    // Another caller (an asynchronous one) filled the queue between the check and the
                    // claim: wait for room again, keeping this call's place.
                    if (!table.release(id)) {
                        return -1; // the connection closed meanwhile and failed the call
                    }
                    refused = true;
                    continue;
                }
                if (!claimFailed(c, id, off)) {
                    metrics.errors.increment();
                    call.completeExceptionally(sendRoom.full(c, 0));
                }
                return -1;
            }
        } finally {
            sendRoom.leave(turn); // claimed or gave up: the next waiting caller's turn
        }
    }

    /** {@code call} is refused before it was sent: it fails with {@code error} (OVERLOADED). */
    private long refuse(PendingCall call, RpcException error) {
        metrics.rejected.increment();
        metrics.errors.increment();
        call.completeExceptionally(error);
        return -1;
    }

    /** Undo a reservation after a failed claim; returns false for back-pressure, else throws. */
    boolean claimFailed(Connection connection, long id, long code) {
        boolean mine = table.release(id);
        if (code == Connection.CLOSED) {
            if (!mine) {
                return true; // the close already failed this call through its sink
            }
            metrics.errors.increment();
            throw errorOnceClosed(connection);
        }
        if (code == Connection.NO_BUFFER) {
            metrics.errors.increment();
            throw CallLimits.noSendBuffer();
        }
        metrics.rejected.increment();
        return false;
    }

    /** @see ClientConnection#errorOnceClosed */
    RpcException errorOnceClosed(Connection c) {
        return dispatch.errorOnceClosed(c);
    }

    /**
     * The caller cancelled call {@code id}: frees its slot at once and tells the server, which stops
     * the call if it still runs. Nothing when the call had ended (answered, failed, timed out). The
     * cancel frame is skipped when the send queue cannot take it now (full, no buffer, closed): the
     * server then finishes the call, and its late response is dropped like any other.
     */
    void cancel(long id) {
        CallTable.Taken t = new CallTable.Taken(); // any thread may cancel: not the I/O thread's scratch
        if (!table.take(id, System.nanoTime(), t)) {
            return;
        }
        metrics.cancelled.increment();
        table.touch(System.nanoTime());
        FrameWriter w = writer;
        Connection c = w.connection();
        if (t.inPlace) {
            c.execute(() -> FrameWriter.detachInPlace(c, id)); // on the I/O thread, where the writes happen
        }
        if (w.claim(FrameDescriptor.HEADER_LENGTH, sendHighWaterMark + FrameDescriptor.HEADER_LENGTH) >= 0) {
            w.cancel(id, t.method.id()).commit();
            metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH);
        }
    }

    // ================================================================== streams

    /**
     * Opens a stream: takes a call slot (waiting for one up to the default timeout or the stream's
     * deadline, whichever is first) and writes the opening request.
     *
     * @param timeoutNanos the stream's timeout, 0 for none
     * @throws RpcException CONNECTION_CLOSED, OVERLOADED (no slot in time), PAYLOAD_TOO_LARGE (metadata)
     */
    public <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, long timeoutNanos, Metadata metadata) {
        return streams.open(method, timeoutNanos, metadata, null);
    }

    /**
     * As {@link #openStream(Method, long, Metadata)}, telling {@code onEnd} once when the stream
     * ends (the failure, null when it ended well, and the metadata of its end), if it opened.
     */
    public <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, long timeoutNanos, Metadata metadata,
                                                StreamEnd onEnd) {
        return streams.open(method, timeoutNanos, metadata, onEnd);
    }

    /**
     * Opens an asynchronous stream ({@link dev.rdmarpc.rpc.RpcChannel#openAsyncStream}); never waits.
     *
     * @param timeoutNanos the stream's timeout, {@link Long#MAX_VALUE} for none
     * @param onEnd        told once when the stream ends, if it opened; null for none
     */
    public <Q, R> AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, long timeoutNanos, Metadata metadata,
            StreamListener<? super R> listener, Executor executor, StreamEnd onEnd) {
        return streams.openAsync(method, timeoutNanos, metadata, listener, executor, onEnd);
    }

    // ================================================================== deadlines

    /** @return the timeout of calls that set none, nanoseconds */
    public long defaultTimeoutNanos() {
        return defaultTimeoutNanos;
    }

    /**
     * @return the time left to the deadline of the call the current thread's handler serves (0 or
     *         less: passed), {@link Long#MAX_VALUE} when it serves none
     */
    public static long inheritedRemainingNanos() {
        return InheritedDeadline.remainingNanos();
    }

    /** @return the effective timeout for a call with {@code timeoutNanos} (0: the default) */
    private long effectiveTimeout(long timeoutNanos) {
        return timeoutNanos > 0 ? timeoutNanos : defaultTimeoutNanos;
    }
}
