package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.EOFException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client side of one connection: a fixed table of outstanding calls indexed by the low bits of
 * the request id, deadlines swept on the I/O thread's tick, every pending call failed at once when
 * the connection closes.
 *
 * <p>Request id = (sequence &lt;&lt; 16) | slot. A response whose id no longer matches its slot
 * (the call timed out meanwhile) is dropped. The table is guarded by one lock; a call takes it twice
 * (reserve, complete) and allocates nothing on the {@link #send} path.
 */
public final class ClientCore implements FrameHandler {
    private static final System.Logger LOG = System.getLogger(ClientCore.class.getName());
    private static final int SLOT_BITS = 16;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    /** Most calls a connection can have outstanding (the slot field's range). */
    public static final int MAX_OUTSTANDING = 1 << SLOT_BITS;

    private final Counters metrics;
    private final int capacity;
    private final int maxFrameLength;
    private final long defaultTimeoutNanos;
    private final long sendHighWaterMark;
    private final String transportName;
    private volatile Connection connection;
    /** Writes this connection's requests; set with {@link #connection} by {@link #attach}. */
    private volatile FrameWriter writer;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private volatile Runnable closeListener;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition slotFreed = lock.newCondition();
    private int waiters;
    /**
     * Blocking callers and stream writers waiting for room in the send queue, in the order they came,
     * each by a condition of its own: only the first is woken when the transport makes progress, only
     * it claims, and a blocking call that finds anyone waiting joins the end instead of taking the room
     * first. Guarded by {@link #lock}.
     */
    private final ArrayDeque<Condition> sendRoomQueue = new ArrayDeque<>();
    /** The size of {@link #sendRoomQueue}, read without the lock. */
    private volatile int sendRoomWaiters;
    /** Longest a blocking call waits for room before it checks the queue again (a guard, not the mechanism). */
    private static final long SEND_ROOM_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private final long[] ids;
    private final Object[] sinks;
    private final long[] tags;
    private final long[] deadlines;
    /** Sum of {@link #requestBytes} of the held slots; written under {@link #lock}. */
    private volatile long outstandingBytes;
    private final long[] starts;
    private final int[] requestBytes;
    private final Method<?, ?>[] methods;
    /** True for a call whose payload the transport may still read in place (see {@link Connection#claimInPlace}). */
    private final boolean[] inPlace;
    private final int[] free;
    private volatile int freeTop;
    /**
     * No held slot's deadline is earlier than this (a lower bound, under the lock): the timeout scan
     * runs only once it has passed, so a tick costs nothing while no call can have timed out.
     */
    private long earliestDeadline = Long.MAX_VALUE;
    private long seq;
    private boolean closed;
    private String closedReason = "connection closed";
    /**
     * What a call on the closed connection fails with: CONNECTION_CLOSED, or PERMISSION_DENIED when
     * the server refused this client (its TLS check of clients): every later call would be refused too.
     */
    private Status closedStatus = Status.CONNECTION_CLOSED;
    private volatile long lastActivityNanos = System.nanoTime();
    /**
     * Calls a pool has handed this connection that have not yet taken a slot (or failed to start):
     * the connection is not idle while there are any ({@link #closeIfIdleSince}).
     */
    private final AtomicInteger claims = new AtomicInteger();

    // I/O-thread scratch
    private final ResponseViewImpl view = new ResponseViewImpl();
    /** Most bytes of metadata a frame may carry, either way. */
    private final int maxMetadataBytes;
    /** The default of {@code streamWindowBytes}: 1 MiB. */
    public static final int DEFAULT_STREAM_WINDOW_BYTES = 1 << 20;
    /** What each stream may have unread here: its receive window. */
    private final int streamWindowBytes;
    /** The code of the former {@code TIMEOUT} status, read as {@link Status#DEADLINE_EXCEEDED} from a frame. */
    private static final int LEGACY_TIMEOUT_CODE = 3;

    /** A stream without a deadline gets one this far away (about 146 years: never, and no overflow). */
    public static final long NO_DEADLINE_NANOS = 1L << 62;
    /** Run around every typed call (by the channel), in this order. */
    private final ClientInterceptor[] interceptors;
    private final Object[] expiredSinks;
    private final long[] expiredTags;
    private final long[] expiredElapsedNanos;
    private final Method<?, ?>[] expiredMethods;
    private final long[] expiredInPlace;

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
        this.streamWindowBytes = streamWindowBytes;
        if (capacity < 1 || capacity > MAX_OUTSTANDING) {
            throw new IllegalArgumentException("maxOutstanding must be in [1, " + MAX_OUTSTANDING + "]: " + capacity);
        }
        this.metrics = metrics;
        this.capacity = capacity;
        this.maxFrameLength = maxFrameLength;
        this.defaultTimeoutNanos = defaultTimeoutNanos;
        this.sendHighWaterMark = sendHighWaterMark;
        this.transportName = transportName;
        this.maxMetadataBytes = maxMetadataBytes;
        this.interceptors = interceptors.toArray(new ClientInterceptor[0]);
        this.ids = new long[capacity];
        this.sinks = new Object[capacity];
        this.tags = new long[capacity];
        this.deadlines = new long[capacity];
        this.starts = new long[capacity];
        this.requestBytes = new int[capacity];
        this.methods = new Method<?, ?>[capacity];
        this.inPlace = new boolean[capacity];
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeTop = capacity;
        this.expiredSinks = new Object[capacity];
        this.expiredTags = new long[capacity];
        this.expiredElapsedNanos = new long[capacity];
        this.expiredMethods = new Method<?, ?>[capacity];
        this.expiredInPlace = new long[capacity];
    }

    /** @return the interceptors the channel runs around this connection's typed calls, in order */
    public ClientInterceptor[] interceptors() {
        return interceptors;
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
        lastActivityNanos = System.nanoTime();
        metrics.connectionsOpened.increment();
        Events.opened(transportName, "client", c.localAddress(), c.remoteAddress());
        LOG.log(System.Logger.Level.DEBUG, "connected {0} -> {1}", c.localAddress(), c.remoteAddress());
    }

    /** @param r run once after the connection closed (a pool drops the connection) */
    public void onClosed(Runnable r) {
        this.closeListener = r;
    }

    /** @return the connection, null before {@link #attach} */
    public Connection connection() {
        return connection;
    }

    /** @return the peer's address */
    public InetSocketAddress remoteAddress() {
        return connection.remoteAddress();
    }

    /** @return true while the connection is open */
    public boolean isOpen() {
        Connection c = connection;
        return c != null && c.isOpen() && !isClosed();
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** @return calls outstanding now */
    public int outstanding() {
        lock.lock();
        try {
            return capacity - freeTop;
        } finally {
            lock.unlock();
        }
    }

    /**
     * @return the request bytes of the calls outstanding now (frames, headers included), read without
     *         the lock: a hint for load balancing
     */
    public long outstandingBytesHint() {
        return outstandingBytes;
    }

    /** @return calls outstanding now, read without the lock (a hint for load balancing) */
    public int outstandingHint() {
        return capacity - freeTop;
    }

    /**
     * Calls sent (or being sent) whose responses have not arrived: the transport pings a server that
     * stays silent while there are any ({@code TcpTransport.Config.pingInterval}).
     */
    @Override
    public int callsInFlight() {
        return outstandingHint();
    }

    /** @return the table's capacity */
    public int capacity() {
        return capacity;
    }

    /** @return {@link System#nanoTime()} of the last call started or completed */
    public long lastActivityNanos() {
        return lastActivityNanos;
    }

    /** A pool handed this connection to a call about to start here: it is not idle until {@link #unclaim}. */
    public void claim() {
        claims.incrementAndGet();
    }

    /** The call {@link #claim} was for has started here (it holds a slot) or failed to. */
    public void unclaim() {
        claims.decrementAndGet();
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
        lock.lock();
        try {
            if (closed || freeTop != capacity || claims.get() != 0 || lastActivityNanos - idleSince > 0) {
                return false;
            }
            closed = true;
            closedReason = "connection closed after being idle";
        } finally {
            lock.unlock();
        }
        close();
        return true;
    }

    // ================================================================== calls

    /**
     * How a typed call waits and what it completes with: {@link #start} takes one.
     */
    public enum CallKind {
        /** Blocking; completes with the response value ({@code call}). */
        CALL(true, false),
        /** Blocking; completes with a {@link Reply}, value and attachment ({@code exchange}). */
        EXCHANGE(true, true),
        /** Asynchronous; completes with the response value ({@code callAsync}). */
        CALL_ASYNC(false, false),
        /** Asynchronous; completes with a {@link Reply} ({@code exchangeAsync}). */
        EXCHANGE_ASYNC(false, true);

        private final boolean blocking;
        private final boolean reply;

        CallKind(boolean blocking, boolean reply) {
            this.blocking = blocking;
            this.reply = reply;
        }

        /**
         * @return true when the caller waits: for a free slot and room in the send queue until the
         *         call's deadline, then for the response; false when it fails with OVERLOADED at once
         */
        public boolean blocking() {
            return blocking;
        }

        /** @return true when the call completes with a {@link Reply} */
        public boolean reply() {
            return reply;
        }
    }

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
        checkMetadata(metadata);
        long plen = payload.byteSize();
        long alen = attachment.byteSize();
        long frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata) + plen + alen;
        checkFrame(frame);
        FrameWriter w = writer;
        if (w.connection().pendingBytes() >= sendHighWaterMark) {
            metrics.rejected.increment();
            return false;
        }
        long timeout = inheritTimeout(effectiveTimeout(timeoutNanos));
        long id = reserve(listener, tag, method, timeout, (int) frame, false, 0, payloadInPlace);
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
            release(id);
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
        checkMetadata(metadata);
        Codec<Q> codec = method.requestCodec();
        int plen = codec.encodedSize(request);
        int alen = attachment.length();
        long frame = (long) FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata) + plen + alen;
        checkFrame(frame);
        FrameWriter w = writer;
        Connection c = w.connection();
        if (wait && c.inEventLoop()) {
            throw new IllegalStateException("a blocking call on the client's own I/O thread would wait for itself;"
                    + " use callAsync or send there");
        }
        long timeout = inheritTimeout(effectiveTimeout(timeoutNanos));
        PendingCall call = new PendingCall(this, method, kind.reply(), responseTarget, timeout);
        long waitDeadline = System.nanoTime() + timeout;
        // An attachment in memory the transport registered goes without a copy (RDMA): host memory, or
        // GPU memory registered through its NicRegistrar; else it is copied (a GPU one is staged).
        boolean tail = alen > 0;
        long id;
        boolean refused = false;
        Condition turn = null; // this call's place among the callers waiting for send room, once it waits
        try {
            while (true) {
                // an asynchronous call never waits: it goes when there is room, whoever waits
                if (wait ? mustWaitForRoom(c, refused, turn) : c.pendingBytes() >= sendHighWaterMark) {
                    if (!wait || (turn = awaitSendRoom(c, waitDeadline, refused, turn)) == null) {
                        metrics.rejected.increment();
                        metrics.errors.increment();
                        call.completeExceptionally(sendQueueFull(c, wait ? timeout : 0));
                        return call;
                    }
                }
                id = reserve(call, 0, method, timeout, (int) frame, wait, waitDeadline, false);
                call.id = id;
                if (id < 0) {
                    metrics.rejected.increment();
                    metrics.errors.increment();
                    call.completeExceptionally(overloaded());
                    return call;
                }
                long off = tail ? w.claimAttachmentInPlace((int) frame, attachment, sendHighWaterMark)
                        : w.claim((int) frame, sendHighWaterMark);
                if (off >= 0) {
                    break;
                }
                if (off == Connection.BACK_PRESSURED && wait) {
                    // Another caller (an asynchronous one) filled the queue between the check and the
                    // claim: wait for room again, keeping this call's place.
                    if (!release(id)) {
                        return call; // the connection closed meanwhile and failed the call
                    }
                    refused = true;
                    continue;
                }
                if (!claimFailed(c, id, off)) {
                    metrics.errors.increment();
                    call.completeExceptionally(sendQueueFull(c, 0));
                }
                return call;
            }
        } finally {
            leaveSendRoomQueue(turn); // claimed or gave up: the next waiting caller's turn
        }
        call.requestBytes = (long) plen + alen; // before the response can complete it
        try {
            w.request(id, method.id(), waitDeadline - System.nanoTime()).metadata(metadata).payload(codec, request, plen)
                    .attachment(attachment);
            w.commit(attachment);
        } catch (Throwable t) {
            release(id);
            throw t;
        }
        metrics.calls.increment();
        metrics.bytesSent.add(frame);
        return call;
    }

    private void checkMetadata(Metadata metadata) {
        if (metadata.encodedLength() > maxMetadataBytes) {
            metrics.errors.increment();
            throw new RpcException(Status.PAYLOAD_TOO_LARGE,
                    MetadataLimits.overLimit("request", metadata.encodedLength(), "client", maxMetadataBytes));
        }
    }

    private void checkFrame(long frame) {
        if (frame > maxFrameLength) {
            metrics.errors.increment();
            throw new RpcException(Status.PAYLOAD_TOO_LARGE,
                    "request frame of " + frame + " bytes exceeds the maximum frame length " + maxFrameLength);
        }
    }

    /**
     * Whether a caller that may wait must wait its turn before claiming: its claim was refused, the
     * queue is over the send high-water mark, or others wait and it has no place among them yet.
     */
    private boolean mustWaitForRoom(Connection c, boolean refused, Condition turn) {
        return refused || c.pendingBytes() >= sendHighWaterMark || turn == null && sendRoomWaiters > 0;
    }

    /**
     * Waits in turn for room in the send queue: until the caller is the first of those waiting
     * ({@link #sendRoomQueue}) and fewer than the send high-water mark's bytes are queued unsent, or
     * the deadline. The first caller keeps its place until it has claimed ({@link #leaveSendRoomQueue}),
     * so the room goes to the callers in the order they came. The transport signals progress
     * ({@link #onSendProgress}); the wait also re-checks every {@link #SEND_ROOM_RECHECK_NANOS} so that no
     * signal can be missed for long.
     *
     * @param atLeastOnce wait for one signal (or re-check) even if there seems to be room: the
     *                    transport refused a claim (another caller's claim came first, or every send
     *                    slot is queued)
     * @param turn        the caller's place from its earlier wait, or null to join at the end
     * @return the caller's place, now first (it claims, then leaves the queue), or null when the
     *         deadline passed first (it has left the queue)
     * @throws RpcException CONNECTION_CLOSED when the connection closed meanwhile, CANCELLED when
     *                      interrupted (it has left the queue)
     */
    private Condition awaitSendRoom(Connection c, long deadline, boolean atLeastOnce, Condition turn) {
        lock.lock();
        try {
            if (turn == null) {
                turn = lock.newCondition();
                sendRoomQueue.addLast(turn);
                sendRoomWaiters = sendRoomQueue.size();
            }
            boolean mustWait = atLeastOnce;
            while (mustWait || sendRoomQueue.peekFirst() != turn || c.pendingBytes() >= sendHighWaterMark) {
                mustWait = false;
                if (closed) {
                    leave(turn);
                    metrics.errors.increment();
                    throw closedError();
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    leave(turn);
                    return null;
                }
                try {
                    turn.awaitNanos(Math.min(remaining, SEND_ROOM_RECHECK_NANOS));
                } catch (InterruptedException e) {
                    leave(turn);
                    Thread.currentThread().interrupt();
                    throw new RpcException(Status.CANCELLED, "interrupted while waiting for room in the send queue");
                }
            }
            return turn;
        } finally {
            lock.unlock();
        }
    }

    /** A caller done with its turn (it claimed, or gave up); null, or a turn already out, is a no-op. */
    private void leaveSendRoomQueue(Condition turn) {
        if (turn == null) {
            return;
        }
        lock.lock();
        try {
            leave(turn);
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code turn} out of the queue (lock held): when it was first, the next caller's turn comes. */
    private void leave(Condition turn) {
        if (sendRoomQueue.peekFirst() == turn) {
            sendRoomQueue.pollFirst();
            Condition next = sendRoomQueue.peekFirst();
            if (next != null) {
                next.signal();
            }
        } else {
            sendRoomQueue.remove(turn);
        }
        sendRoomWaiters = sendRoomQueue.size();
    }

    @Override
    public void onSendProgress(Connection c) {
        if (!roomWaiters.isEmpty()) {
            wakeRoomWaiters();
        }
        if (sendRoomWaiters > 0) {
            lock.lock();
            try {
                Condition first = sendRoomQueue.peekFirst(); // the others wait for their turn, not for room
                if (first != null) {
                    first.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private RpcException sendQueueFull(Connection c, long waitedNanos) {
        return new RpcException(Status.OVERLOADED, "send queue full: " + c.pendingBytes() + " bytes unsent, limit "
                + sendHighWaterMark + (waitedNanos > 0 ? ", for the whole " + TimeUnit.NANOSECONDS.toMillis(waitedNanos)
                + " ms the call could wait" : ""));
    }

    private static RpcException overloaded() {
        return new RpcException(Status.OVERLOADED, "too many calls outstanding on the connection");
    }

    /** Undo a reservation after a failed claim; returns false for back-pressure, else throws. */
    private boolean claimFailed(Connection connection, long id, long code) {
        boolean mine = release(id);
        if (code == Connection.CLOSED) {
            if (!mine) {
                return true; // the close already failed this call through its sink
            }
            metrics.errors.increment();
            throw errorOnceClosed(connection);
        }
        if (code == Connection.NO_BUFFER) {
            metrics.errors.increment();
            throw new RpcException(Status.RESOURCE_EXHAUSTED, "buffer pool exhausted: no send buffer");
        }
        metrics.rejected.increment();
        return false;
    }

    /**
     * What a call on the closed connection fails with, once {@link #onClose} has recorded why: the
     * transport refuses claims a moment before it tells the handler (on its I/O thread), and a call
     * that fails in between must still say why (a server's last word, say). Waits up to a second,
     * never on the connection's I/O thread (which is the one to record it).
     */
    private RpcException errorOnceClosed(Connection c) {
        if (c != null && !c.inEventLoop()) {
            try {
                closedLatch.await(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        lock.lock();
        try {
            return closedError();
        } finally {
            lock.unlock();
        }
    }

    /** @return what a call on the closed connection fails with; under {@link #lock} */
    private RpcException closedError() {
        return new RpcException(closedStatus, closedReason);
    }

    /** @param payloadInPlace true when the transport may read the call's payload in place until it ends */
    private long reserve(Object sink, long tag, Method<?, ?> method, long timeoutNanos, int frame, boolean wait,
                         long waitDeadline, boolean payloadInPlace) {
        return reserve(sink, tag, method, timeoutNanos, frame, wait, waitDeadline, payloadInPlace, false, 0);
    }

    /** @param callDeadline with {@code ownDeadline}, the call's deadline, whatever the wait's */
    private long reserve(Object sink, long tag, Method<?, ?> method, long timeoutNanos, int frame, boolean wait,
                         long waitDeadline, boolean payloadInPlace, boolean ownDeadline, long callDeadline) {
        long now = System.nanoTime();
        lock.lock();
        try {
            if (closed) {
                metrics.errors.increment();
                throw closedError();
            }
            while (freeTop == 0) {
                long remaining = waitDeadline - System.nanoTime();
                if (!wait || remaining <= 0) {
                    return -1;
                }
                waiters++;
                try {
                    slotFreed.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RpcException(Status.CANCELLED, "interrupted while waiting for a free call slot");
                } finally {
                    waiters--;
                }
                if (closed) {
                    metrics.errors.increment();
                    throw closedError();
                }
                now = System.nanoTime();
            }
            int slot = free[--freeTop];
            long id = (++seq << SLOT_BITS) | slot;
            ids[slot] = id;
            sinks[slot] = sink;
            tags[slot] = tag;
            methods[slot] = method;
            inPlace[slot] = payloadInPlace;
            // A call that waited for its slot keeps its original deadline (the wait counts).
            long deadline = ownDeadline ? callDeadline : wait ? waitDeadline : now + effectiveTimeout(timeoutNanos);
            deadlines[slot] = deadline;
            if (freeTop == capacity - 1 || deadline - earliestDeadline < 0) {
                earliestDeadline = deadline; // the only held slot, or an earlier one
            }
            starts[slot] = now;
            requestBytes[slot] = frame;
            outstandingBytes += frame;
            lastActivityNanos = now;
            metrics.inFlight.increment();
            return id;
        } finally {
            lock.unlock();
        }
    }

    /** Frees the slot of {@code id}; false when it was no longer held by that call. */
    private boolean release(long id) {
        lock.lock();
        try {
            int slot = (int) (id & SLOT_MASK);
            if (slot >= capacity || ids[slot] != id) {
                return false;
            }
            freeSlot(slot);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The caller cancelled call {@code id}: frees its slot at once and tells the server, which stops
     * the call if it still runs. Nothing when the call had ended (answered, failed, timed out). The
     * cancel frame is skipped when the send queue cannot take it now (full, no buffer, closed): the
     * server then finishes the call, and its late response is dropped like any other.
     */
    void cancel(long id) {
        int methodId;
        boolean detach;
        lock.lock();
        try {
            int slot = (int) (id & SLOT_MASK);
            if (slot >= capacity || ids[slot] != id) {
                return;
            }
            methodId = methods[slot].id();
            detach = inPlace[slot];
            freeSlot(slot);
        } finally {
            lock.unlock();
        }
        metrics.cancelled.increment();
        lastActivityNanos = System.nanoTime();
        FrameWriter w = writer;
        Connection c = w.connection();
        if (detach) {
            c.execute(() -> c.detachInPlace(id)); // on the I/O thread, where the writes happen
        }
        if (w.claim(FrameDescriptor.HEADER_LENGTH, sendHighWaterMark + FrameDescriptor.HEADER_LENGTH) >= 0) {
            w.cancel(id, methodId).commit();
            metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH);
        }
    }

    private void freeSlot(int slot) {
        outstandingBytes -= requestBytes[slot];
        ids[slot] = 0;
        sinks[slot] = null;
        methods[slot] = null;
        inPlace[slot] = false;
        free[freeTop++] = slot;
        metrics.inFlight.decrement();
        if (waiters > 0) {
            slotFreed.signal();
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
        return openStream(method, timeoutNanos, metadata, null);
    }

    /**
     * As {@link #openStream(Method, long, Metadata)}, telling {@code onEnd} once when the stream
     * ends (the failure, null when it ended well, and the metadata of its end), if it opened.
     */
    public <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, long timeoutNanos, Metadata metadata,
                                                StreamEnd onEnd) {
        checkMetadata(metadata);
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        FrameWriter w = writer;
        Connection c = w.connection();
        if (c.inEventLoop()) {
            throw new IllegalStateException("a stream on the client's own I/O thread would wait for itself");
        }
        long timeout = inheritTimeout(timeoutNanos > 0 ? timeoutNanos : Long.MAX_VALUE);
        long now = System.nanoTime();
        long deadline = now + (timeout == Long.MAX_VALUE ? NO_DEADLINE_NANOS : timeout);
        long slotWait = now + Math.min(timeout, defaultTimeoutNanos);
        ClientStreamCall<Q, R> s = new ClientStreamCall<>(this, method, streamWindowBytes, deadline);
        s.onEnd(onEnd);
        long id = reserve(s, 0, method, timeout, frame, true, slotWait, false, true, deadline);
        if (id < 0) {
            metrics.rejected.increment();
            metrics.errors.increment();
            throw overloaded();
        }
        s.id = id;
        boolean refused = false;
        Condition turn = null;
        try {
            while (true) {
                if (mustWaitForRoom(c, refused, turn)) {
                    turn = awaitSendRoom(c, slotWait, refused, turn);
                    if (turn == null) {
                        release(id);
                        metrics.errors.increment();
                        throw sendQueueFull(c, timeout);
                    }
                }
                long off = w.claim(frame, sendHighWaterMark);
                if (off >= 0) {
                    break;
                }
                if (off != Connection.BACK_PRESSURED) {
                    if (!claimFailed(c, id, off)) {
                        throw sendQueueFull(c, 0);
                    }
                    throw errorOnceClosed(c);
                }
                refused = true;
            }
        } finally {
            leaveSendRoomQueue(turn);
        }
        w.request(id, method.id(), timeout).metadata(metadata).flag(FrameDescriptor.FLAG_STREAM)
                .payload(MemorySegment.NULL, 0, 0);
        w.commit();
        metrics.calls.increment();
        metrics.bytesSent.add(frame);
        long grant = s.flow().grantNow(); // this side's window beyond the initial one, at once
        if (grant > 0 && !writeStreamWindow(s, grant)) {
            s.flow().ungrant(grant);
        }
        return s;
    }

    /**
     * Opens an asynchronous stream without waiting: takes a free call slot (OVERLOADED when none is
     * free now) and queues the opening frame, which goes at once when the send queue has room.
     *
     * @param timeoutNanos the stream's timeout, {@link Long#MAX_VALUE} for none
     * @throws RpcException CONNECTION_CLOSED, OVERLOADED (no free slot), PAYLOAD_TOO_LARGE (metadata)
     */
    void openAsyncStream(AsyncClientStreamCall<?, ?> s, long timeoutNanos, Metadata metadata) {
        checkMetadata(metadata);
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        long timeout = inheritTimeout(timeoutNanos > 0 ? timeoutNanos : Long.MAX_VALUE);
        long deadline = System.nanoTime() + (timeout == Long.MAX_VALUE ? NO_DEADLINE_NANOS : timeout);
        s.deadline(deadline);
        long id = reserve(s, 0, s.method(), timeout, frame, false, 0, false, true, deadline);
        if (id < 0) {
            metrics.rejected.increment();
            metrics.errors.increment();
            throw overloaded();
        }
        s.id = id;
        metrics.calls.increment();
        s.open(metadata, timeout == Long.MAX_VALUE);
    }

    /**
     * Opens an asynchronous stream ({@link dev.rdmarpc.rpc.RpcChannel#openAsyncStream}); never waits.
     *
     * @param timeoutNanos the stream's timeout, {@link Long#MAX_VALUE} for none
     * @param onEnd        told once when the stream ends, if it opened; null for none
     */
    public <Q, R> dev.rdmarpc.rpc.AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, long timeoutNanos,
            Metadata metadata, dev.rdmarpc.rpc.StreamListener<? super R> listener, java.util.concurrent.Executor executor,
            StreamEnd onEnd) {
        AsyncClientStreamCall<Q, R> s = new AsyncClientStreamCall<>(this, method, streamWindowBytes, listener, executor, onEnd);
        openAsyncStream(s, timeoutNanos, metadata);
        return s;
    }

    /** Writes an asynchronous stream's opening frame and its first grant; never waits. */
    int writeAsyncStreamOpen(ClientStreamSink s, Metadata metadata, boolean noDeadline, long deadline) {
        int frame = FrameDescriptor.HEADER_LENGTH + MetadataLimits.blockLength(metadata);
        long left = noDeadline ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0) {
            return AsyncStreamIo.GONE; // its deadline passed while it waited to open: the sweep ends it
        }
        int r = asyncClaim(s, frame);
        if (r != AsyncStreamIo.WROTE) {
            return r;
        }
        FrameWriter w = writer;
        w.request(s.id, s.method().id(), left).metadata(metadata).flag(FrameDescriptor.FLAG_STREAM)
                .payload(MemorySegment.NULL, 0, 0);
        w.commit();
        metrics.bytesSent.add(frame);
        long grant = s.flow().grantNow();
        if (grant > 0 && !writeStreamWindow(s, grant)) {
            s.flow().ungrant(grant);
        }
        return AsyncStreamIo.WROTE;
    }

    /** Writes an asynchronous stream's message if the send queue has room; never waits. */
    <T> int writeAsyncStreamMessage(ClientStreamSink s, Codec<T> codec, T value, int plen) {
        int frame = FrameDescriptor.HEADER_LENGTH + plen;
        int r = asyncClaim(s, frame);
        if (r != AsyncStreamIo.WROTE) {
            return r;
        }
        writer.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), 0).payload(codec, value, plen);
        writer.commit();
        metrics.bytesSent.add(frame);
        return AsyncStreamIo.WROTE;
    }

    /** Writes an asynchronous stream's half-close if the send queue has room; never waits. */
    int writeAsyncStreamEnd(ClientStreamSink s) {
        int r = asyncClaim(s, FrameDescriptor.HEADER_LENGTH);
        if (r != AsyncStreamIo.WROTE) {
            return r;
        }
        writer.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), FrameDescriptor.FLAG_END_STREAM).commit();
        metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH);
        return AsyncStreamIo.WROTE;
    }

    /** Claims a frame as an asynchronous call does (room under the high-water mark, whoever waits). */
    private int asyncClaim(ClientStreamSink s, int frame) {
        long off = writer.claim(frame, sendHighWaterMark);
        if (off >= 0) {
            return AsyncStreamIo.WROTE;
        }
        if (off == Connection.BACK_PRESSURED) {
            return AsyncStreamIo.NO_ROOM;
        }
        if (off == Connection.NO_BUFFER) {
            streamFailed(s, new RpcException(Status.RESOURCE_EXHAUSTED, "buffer pool exhausted: no send buffer"));
        }
        return AsyncStreamIo.GONE; // closed: the close fails the stream
    }

    /** Asynchronous streams waiting for room in the send queue; told on the transport's progress. */
    private final java.util.concurrent.ConcurrentLinkedQueue<ClientStreamSink> roomWaiters =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** {@code s} waits for room in the send queue: {@link ClientStreamSink#onRoom} once the transport sent something. */
    void awaitRoom(ClientStreamSink s) {
        roomWaiters.add(s);
    }

    private void wakeRoomWaiters() {
        for (int n = roomWaiters.size(); n > 0; n--) {
            ClientStreamSink s = roomWaiters.poll();
            if (s == null) {
                return;
            }
            s.onRoom();
        }
    }

    void checkStreamFrame(long frame) {
        checkFrame(frame);
    }

    /** Writes a stream's message, waiting for room in the send queue until {@code deadline}. */
    <T> void writeStreamMessage(ClientStreamCall<?, ?> s, Codec<T> codec, T value, int plen, long deadline) {
        int frame = FrameDescriptor.HEADER_LENGTH + plen;
        claimForStream(frame, deadline);
        writer.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), 0).payload(codec, value, plen);
        writer.commit();
        metrics.bytesSent.add(frame);
    }

    /** Writes a stream's half-close. */
    void writeStreamEnd(ClientStreamCall<?, ?> s, long deadline) {
        claimForStream(FrameDescriptor.HEADER_LENGTH, deadline);
        writer.stream(FrameDescriptor.TYPE_STREAM_MESSAGE, s.id, s.method().id(), FrameDescriptor.FLAG_END_STREAM).commit();
        metrics.bytesSent.add(FrameDescriptor.HEADER_LENGTH);
    }

    /**
     * Grants the server {@code increment} more bytes of the stream's messages; never waits.
     *
     * @return false when it cannot be sent now (the caller owes it still); true when sent, or when
     *         the connection is closed (nothing is owed any more)
     */
    boolean writeStreamWindow(ClientStreamSink s, long increment) {
        if (!writer.windowUpdate(s.id, s.method().id(), increment)) {
            return false;
        }
        metrics.bytesSent.add(FrameWriter.WINDOW_FRAME_LENGTH);
        return true;
    }

    /** Claims a frame of a stream in the writer, waiting for room until {@code deadline}. */
    private void claimForStream(int frame, long deadline) {
        FrameWriter w = writer;
        Connection c = w.connection();
        boolean refused = false;
        Condition turn = null;
        try {
            while (true) {
                if (mustWaitForRoom(c, refused, turn)) {
                    turn = awaitSendRoom(c, deadline, refused, turn);
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
                    throw errorOnceClosed(c);
                }
                if (off == Connection.NO_BUFFER) {
                    metrics.errors.increment();
                    throw new RpcException(Status.RESOURCE_EXHAUSTED, "buffer pool exhausted: no send buffer");
                }
                refused = true;
            }
        } finally {
            leaveSendRoomQueue(turn);
        }
    }

    /** A stream's message or window frame arrived (I/O thread). */
    private void streamFrame(Connection c, int type, MemorySegment buf, long offset, int length) {
        metrics.bytesReceived.add(length);
        long id = FrameHeader.requestId(buf, offset);
        Object sink;
        lock.lock();
        try {
            int slot = (int) (id & SLOT_MASK);
            sink = slot < capacity && ids[slot] == id ? sinks[slot] : null;
        } finally {
            lock.unlock();
        }
        if (!(sink instanceof ClientStreamSink s)) {
            return; // a stream that ended here (cancelled, timed out): its late frames are dropped
        }
        lastActivityNanos = System.nanoTime();
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE) {
            s.onMessage(buf, offset, length);
            return;
        }
        int increment = StreamMessages.increment(buf, offset);
        if (increment <= 0) {
            streamFailed(s, new RpcException(Status.PROTOCOL_ERROR, "server sent a stream window update of " + increment));
            return;
        }
        s.onWindow(increment);
    }

    /** A stream failed here for the server's fault: it ends with {@code error}, and the server is sent a cancel. */
    /**
     * Call {@code id}'s deadline passed and the caller ended it here: frees its slot without telling
     * the server, which stops it at the same deadline ({@code DEADLINE_EXCEEDED}, not a cancel).
     */
    void expired(long id) {
        if (release(id)) {
            metrics.timeouts.increment();
            metrics.errors.increment();
        }
    }

    void streamFailed(ClientStreamSink s, RpcException error) {
        metrics.errors.increment();
        s.failed(error);
        cancel(s.id);
    }

    // ================================================================== I/O thread

    @Override
    public void onFrame(Connection c, MemorySegment buf, long offset, int length) {
        frame(c, buf, offset, length, null);
    }

    /**
     * A successful response to a call that gave a buffer for its response attachment
     * ({@link dev.rdmarpc.rpc.CallOptions#withResponseAttachment}) has the transport write the
     * attachment there, when it can (RDMA rendezvous into registered memory: host memory, or GPU
     * memory registered through the transport's NicRegistrar).
     */
    @Override
    public MemorySegment attachmentSink(Connection c, MemorySegment header, long offset) {
        if (FrameHeader.type(header, offset) != FrameDescriptor.TYPE_RESPONSE
                || FrameHeader.status(header, offset) != FrameDescriptor.STATUS_OK) {
            return null;
        }
        long id = FrameHeader.requestId(header, offset);
        int alen = FrameHeader.attachmentLength(header, offset);
        lock.lock();
        try {
            int slot = (int) (id & SLOT_MASK);
            if (slot >= capacity || ids[slot] != id || !(sinks[slot] instanceof PendingCall p)) {
                return null;
            }
            Attachment target = p.responseTarget;
            return target != null && alen <= target.length() ? FrameWriter.nicView(target) : null;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onFrame(Connection c, MemorySegment buf, long offset, int length, MemorySegment landed) {
        frame(c, buf, offset, length, landed);
    }

    /** A frame arrived; {@code landed}: its attachment, already in the call's response target, or null. */
    private void frame(Connection c, MemorySegment buf, long offset, int length, MemorySegment landed) {
        int type = FrameHeader.type(buf, offset);
        if (type > FrameDescriptor.TYPE_MAX_KNOWN) {
            LOG.log(System.Logger.Level.DEBUG, "ignoring a frame of unknown message type {0} from {1}", type,
                    c.remoteAddress());
            return; // a later version's: nothing here depends on it
        }
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE || type == FrameDescriptor.TYPE_STREAM_WINDOW) {
            streamFrame(c, type, buf, offset, length);
            return;
        }
        if (type != FrameDescriptor.TYPE_RESPONSE) {
            String why = type == FrameDescriptor.TYPE_CANCEL ? "server sent a cancel frame" : "server sent a request frame";
            LOG.log(System.Logger.Level.WARNING, "closing connection to {0}: {1}", c.remoteAddress(), why);
            c.close(new ProtocolException(why));
            return;
        }
        metrics.bytesReceived.add(length);
        long id = FrameHeader.requestId(buf, offset);
        if (id == FrameDescriptor.CONNECTION_REQUEST_ID) {
            connectionError(c, buf, offset);
            return;
        }
        Object sink;
        long tag;
        long start;
        int reqBytes;
        Method<?, ?> method;
        boolean detach;
        boolean pastDeadline;
        long now = System.nanoTime();
        lock.lock();
        try {
            int slot = (int) (id & SLOT_MASK);
            if (slot >= capacity || ids[slot] != id) {
                return; // a late response to a call that timed out
            }
            pastDeadline = now - deadlines[slot] >= 0;
            sink = sinks[slot];
            tag = tags[slot];
            start = starts[slot];
            reqBytes = requestBytes[slot];
            method = methods[slot];
            detach = inPlace[slot];
            freeSlot(slot);
        } finally {
            lock.unlock();
        }
        if (detach) {
            c.detachInPlace(id); // a response before the whole request was written: only a broken server
        }
        lastActivityNanos = now;
        int statusCode = FrameHeader.status(buf, offset);
        RpcException badMetadata = FrameHeader.metadataLength(buf, offset) == 0 ? null
                : MetadataLimits.refusal(buf, offset, "response", method.name(), "client", maxMetadataBytes);
        if (badMetadata != null || statusCode != FrameDescriptor.STATUS_OK) {
            RpcException error = badMetadata != null ? badMetadata : errorFrom(buf, offset, statusCode);
            if (pastDeadline) {
                // the server gave up at the deadline it was sent, or a call the handler made timed out
                // with it: either way this call's deadline passed, as the sweep would say
                metrics.timeouts.increment();
                error = new RpcException(Status.DEADLINE_EXCEEDED, method.name() + " timed out after "
                        + TimeUnit.NANOSECONDS.toMillis(now - start) + " ms (the server said: " + error.status() + " "
                        + error.getMessage() + ")");
            }
            metrics.errors.increment();
            if (sink instanceof ClientStreamSink s) {
                s.ended(error, Metadata.EMPTY); // after the messages that came before it
            } else {
                fail(sink, tag, error);
            }
            if (Events.clientCallEnabled()) {
                Events.clientCall(method.name(), method.id(), c.remoteAddress(), error.status().name(), now - start,
                        reqBytes, length);
            }
            return;
        }
        if (sink instanceof ResponseListener l) {
            try {
                l.onResponse(tag, view.wrap(buf, offset));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "response listener threw", e);
            } finally {
                view.clear();
            }
        } else if (sink instanceof ClientStreamSink s) {
            int mlen = FrameHeader.metadataLength(buf, offset); // checked above
            s.ended(null, mlen == 0 ? Metadata.EMPTY : Metadata.readFrom(buf, offset + FrameDescriptor.HEADER_LENGTH));
        } else {
            ((PendingCall) sink).completeFrom(buf, offset, metrics, landed != null);
        }
        if (Events.clientCallEnabled()) {
            Events.clientCall(method.name(), method.id(), c.remoteAddress(), Status.OK.name(), now - start, reqBytes, length);
        }
    }

    /** The server says why it closes the connection: close it now, failing the calls outstanding with its status. */
    private void connectionError(Connection c, MemorySegment buf, long offset) {
        int statusCode = FrameHeader.status(buf, offset);
        RpcException error = statusCode == FrameDescriptor.STATUS_OK
                ? new RpcException(Status.PROTOCOL_ERROR, "server sent a successful response to request id 0")
                : FrameHeader.metadataLength(buf, offset) != 0
                ? new RpcException(Status.PROTOCOL_ERROR, "server sent a connection-level error with metadata")
                : errorFrom(buf, offset, statusCode);
        c.close(error);
    }

    /** An error response's status and message, and its metadata (checked, or a connection-level error's: none). */
    private static RpcException errorFrom(MemorySegment buf, long offset, int statusCode) {
        // code 3 (TIMEOUT) never travelled, but a peer that sends it means a deadline: read it so
        Status status = statusCode == LEGACY_TIMEOUT_CODE ? Status.DEADLINE_EXCEEDED : Status.fromCode(statusCode);
        int mlen = FrameHeader.metadataLength(buf, offset);
        int plen = FrameHeader.payloadLength(buf, offset) - mlen;
        String message;
        try {
            message = Codecs.STRING.decode(buf, offset + FrameDescriptor.HEADER_LENGTH + mlen, plen);
        } catch (RuntimeException e) {
            message = "(undecodable error message)";
        }
        if (status == null || status == Status.OK || !status.isWire()) {
            return new RpcException(Status.PROTOCOL_ERROR, "server sent unknown status code " + statusCode + ": " + message);
        }
        RpcException e = new RpcException(status, message);
        return mlen == 0 ? e : e.withMetadata(Metadata.readFrom(buf, offset + FrameDescriptor.HEADER_LENGTH));
    }

    private void fail(Object sink, long tag, RpcException error) {
        if (sink instanceof ResponseListener l) {
            try {
                l.onError(tag, error);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "response listener threw", e);
            }
        } else if (sink instanceof PendingCall p) {
            p.completeExceptionally(error);
        } else if (sink instanceof ClientStreamSink s) {
            s.failed(error);
        }
    }

    /** Calls are held (they have deadlines to watch); a racy read is enough, see {@link FrameHandler#hasTimedWork}. */
    @Override
    public boolean hasTimedWork() {
        return freeTop != capacity;
    }

    @Override
    public void onTick(Connection c, long nowNanos) {
        if (!roomWaiters.isEmpty()) {
            wakeRoomWaiters(); // a progress that came between a refused claim and its wait
        }
        int n = 0;
        lock.lock();
        try {
            if (freeTop == capacity || earliestDeadline - nowNanos > 0) {
                return;
            }
            // Slots are handed out last-freed first, from slot 0 up, so held slots cluster low: the scan
            // ends after the last held one instead of walking the whole table (65,536 slots at most).
            int held = capacity - freeTop;
            long earliest = Long.MAX_VALUE;
            for (int slot = 0; slot < capacity && held > 0; slot++) {
                if (ids[slot] == 0) {
                    continue;
                }
                held--;
                if (deadlines[slot] - nowNanos <= 0) {
                    expiredSinks[n] = sinks[slot];
                    expiredTags[n] = tags[slot];
                    expiredElapsedNanos[n] = nowNanos - starts[slot];
                    expiredMethods[n] = methods[slot];
                    expiredInPlace[n] = inPlace[slot] ? ids[slot] : 0;
                    n++;
                    freeSlot(slot);
                } else if (earliest == Long.MAX_VALUE || deadlines[slot] - earliest < 0) {
                    earliest = deadlines[slot];
                }
            }
            earliestDeadline = earliest;
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < n; i++) {
            Object sink = expiredSinks[i];
            expiredSinks[i] = null;
            Method<?, ?> m = expiredMethods[i];
            expiredMethods[i] = null;
            if (expiredInPlace[i] != 0) {
                c.detachInPlace(expiredInPlace[i]); // the caller may reuse the payload once it hears
            }
            metrics.timeouts.increment();
            metrics.errors.increment();
            fail(sink, expiredTags[i], new RpcException(Status.DEADLINE_EXCEEDED,
                    m.name() + " timed out after " + TimeUnit.NANOSECONDS.toMillis(expiredElapsedNanos[i]) + " ms"));
            if (Events.clientCallEnabled()) {
                Events.clientCall(m.name(), m.id(), c.remoteAddress(), Status.DEADLINE_EXCEEDED.name(), expiredElapsedNanos[i], 0, 0);
            }
        }
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        String reason;
        Status status = Status.CONNECTION_CLOSED;
        if (cause == null) {
            reason = "client closed the connection";
        } else if (cause instanceof RpcException serverSaid) {
            reason = "server closed the connection: " + serverSaid.getMessage();
            status = serverSaid.status();
        } else if (cause instanceof EOFException) {
            reason = "server closed the connection";
        } else {
            reason = "connection failed: " + cause.getMessage();
        }
        if (cause instanceof ProtocolException) {
            metrics.protocolErrors.increment();
        }
        Object[] pendingSinks;
        long[] pendingTags;
        int n = 0;
        lock.lock();
        try {
            closed = true;
            closedReason = reason;
            if (status == Status.PERMISSION_DENIED) {
                closedStatus = status;
            }
            int count = capacity - freeTop;
            pendingSinks = new Object[count];
            pendingTags = new long[count];
            for (int slot = 0; slot < capacity && n < count; slot++) {
                if (ids[slot] != 0) {
                    pendingSinks[n] = sinks[slot];
                    pendingTags[n] = tags[slot];
                    n++;
                    freeSlot(slot);
                }
            }
            slotFreed.signalAll();
            for (Condition turn : sendRoomQueue) {
                turn.signal(); // each sees the close and leaves
            }
        } finally {
            lock.unlock();
        }
        metrics.connectionsClosed.increment();
        for (int i = 0; i < n; i++) {
            metrics.errors.increment();
            fail(pendingSinks[i], pendingTags[i], new RpcException(status, reason));
        }
        Events.closed(transportName, "client", c.localAddress(), c.remoteAddress(), reason);
        LOG.log(cause == null || cause instanceof EOFException ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "client connection {0} -> {1} closed: {2}", c.localAddress(), c.remoteAddress(), reason);
        closedLatch.countDown();
        Runnable r = closeListener;
        if (r != null) {
            r.run();
        }
    }

    /**
     * Closes the connection and waits (up to 5 s) until every pending call has been failed.
     */
    public void close() {
        Connection c = connection;
        if (c != null) {
            c.close(null);
            try {
                closedLatch.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A call made from inside a handler (on its thread) waits no longer than the call that handler
     * serves: its deadline travels on.
     *
     * @return {@code timeout}, or the time left to the served call's deadline when that is shorter
     * @throws RpcException DEADLINE_EXCEEDED when that deadline has passed: the call is not sent
     */
    private long inheritTimeout(long timeout) {
        long inherited = InheritedDeadline.remainingNanos();
        if (inherited >= timeout) {
            return timeout;
        }
        if (inherited <= 0) {
            metrics.errors.increment();
            throw new RpcException(Status.DEADLINE_EXCEEDED, "the deadline of the call this one is made for has passed");
        }
        return inherited;
    }

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

    /** A typed call in flight: a future that decodes its own response. */
    public static final class PendingCall extends CompletableFuture<Object> {
        private final ClientCore core;
        private final Method<?, ?> method;
        private final boolean reply;
        private final Attachment responseTarget;
        private final long timeoutNanos;
        /** The call's request id once it holds a slot; 0 before (or when it never got one). */
        volatile long id;
        /** The successful response's metadata, set before the call completes. */
        private volatile Metadata responseMetadata = Metadata.EMPTY;
        /** The request's message and attachment bytes, set once it is written; -1 before. */
        private volatile long requestBytes = -1;
        /** The response's message and attachment bytes, set before the call completes with it; -1 before. */
        private volatile long responseBytes = -1;

        PendingCall(ClientCore core, Method<?, ?> method, boolean reply, Attachment responseTarget, long timeoutNanos) {
            this.core = core;
            this.method = method;
            this.reply = reply;
            this.responseTarget = responseTarget;
            this.timeoutNanos = timeoutNanos;
        }

        /**
         * Waits for the outcome: the call's own deadline is enforced by the I/O thread's tick; the
         * wait's limit (the call's timeout and 2 s) only guards against a stuck I/O thread.
         *
         * @param <R> what the call completes with: the response value, or a {@link Reply}
         * @return the outcome
         * @throws RpcException with the status of the failure
         */
        public <R> R await() {
            try {
                @SuppressWarnings("unchecked")
                R r = (R) get(timeoutNanos + TimeUnit.SECONDS.toNanos(2), TimeUnit.NANOSECONDS);
                return r;
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof RpcException re) {
                    throw new RpcException(re.status(), re.getMessage(), re).withMetadata(re.metadata());
                }
                if (c instanceof RuntimeException rt) {
                    throw rt;
                }
                throw new RpcException(Status.PROTOCOL_ERROR, String.valueOf(c), c);
            } catch (CancellationException e) {
                throw new RpcException(Status.CANCELLED, "call cancelled", e);
            } catch (InterruptedException e) {
                cancel(true); // the server is told; the slot is free at once
                Thread.currentThread().interrupt();
                throw new RpcException(Status.CANCELLED, "interrupted while waiting for the response");
            } catch (TimeoutException e) {
                throw new RpcException(Status.DEADLINE_EXCEEDED, "no response (I/O thread unresponsive)");
            }
        }

        /**
         * Cancels the call, if it has not completed: it completes with a {@link CancellationException}
         * at once (a blocking {@link #await} throws {@link RpcException} with {@link Status#CANCELLED}),
         * its slot on the connection is free again, and the server is sent a cancel: a blocking
         * handler still running is interrupted and its result dropped. A response that arrives
         * after is discarded.
         *
         * @param mayInterruptIfRunning ignored: the server is always told
         * @return true when the call is cancelled (by this cancel or an earlier one), false when it
         *         had completed already
         */
        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            long callId = id;
            if (cancelled && callId > 0) {
                core.cancel(callId);
            }
            return cancelled;
        }

        /** @return the metadata of the call's successful response; {@link Metadata#EMPTY} before, or when none */
        public Metadata responseMetadata() {
            return responseMetadata;
        }

        /** @return bytes of the request's message and attachment once it was written; -1 before, or when it was not */
        public long requestBytes() {
            return requestBytes;
        }

        /** @return bytes of the response's message and attachment once one came; -1 before, or when none */
        public long responseBytes() {
            return responseBytes;
        }

        /**
         * @param <T> what the call completes with: the response value, or a {@link Reply}
         * @return this call as the future its caller sees
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        public <T> CompletableFuture<T> future() {
            return (CompletableFuture) this;
        }

        /** @param landed whether the attachment is in {@link #responseTarget} already (only the rest is in {@code buf}) */
        void completeFrom(MemorySegment buf, long offset, Counters metrics, boolean landed) {
            int mlen = FrameHeader.metadataLength(buf, offset); // checked by the caller
            int plen = FrameHeader.payloadLength(buf, offset) - mlen;
            int alen = FrameHeader.attachmentLength(buf, offset);
            long poff = offset + FrameDescriptor.HEADER_LENGTH + mlen;
            Metadata md = mlen == 0 ? Metadata.EMPTY : Metadata.readFrom(buf, offset + FrameDescriptor.HEADER_LENGTH);
            responseMetadata = md;
            responseBytes = (long) plen + alen;
            Codec<?> codec = method.responseCodec();
            Object value;
            try {
                if (codec.decodesToView()) {
                    // The receive buffer is reused after this returns: give the value memory of its own.
                    MemorySegment copy = MemorySegment.ofArray(new byte[plen]);
                    MemorySegment.copy(buf, poff, copy, 0, plen);
                    value = codec.decode(copy, 0, plen);
                } else {
                    value = codec.decode(buf, poff, plen);
                }
            } catch (RuntimeException e) {
                metrics.errors.increment();
                completeExceptionally(new RpcException(Status.PROTOCOL_ERROR,
                        "response of " + method.name() + " could not be decoded: " + e.getMessage(), e));
                return;
            }
            Attachment att = Attachment.NONE;
            if (alen > 0 && responseTarget != null) {
                if (alen > responseTarget.length()) {
                    metrics.errors.increment();
                    completeExceptionally(new RpcException(Status.PAYLOAD_TOO_LARGE, "response attachment of " + alen
                            + " bytes does not fit the provided " + responseTarget));
                    return;
                }
                try {
                    att = landed ? responseTarget.prefix(alen) : DeviceAttachments.land(buf, poff + plen, alen, responseTarget);
                } catch (RuntimeException e) { // a driver failure copying to the GPU: the caller sees it as is
                    metrics.errors.increment();
                    completeExceptionally(e);
                    return;
                }
            } else if (alen > 0 && reply) {
                MemorySegment copy = MemorySegment.ofArray(new byte[alen]);
                MemorySegment.copy(buf, poff + plen, copy, 0, alen);
                att = Attachment.of(copy);
            }
            if (reply) {
                complete(new Reply<>(value, att, md));
            } else {
                complete(value);
            }
        }
    }
}
