package dev.rdmarpc.rdmacm;

import dev.rdmarpc.rdmacm.raw.rdma_cm_event;
import dev.rdmarpc.rdmacm.raw.rdma_conn_param;
import dev.rdmarpc.rdmacm.raw.rdma_event_channel;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A connection-manager event channel ({@code struct rdma_event_channel}): the file descriptor on
 * which librdmacm reports the events of the {@link CmId}s created on it. Every id belongs to one
 * channel; its events come out of {@link #poll(Duration)} as {@link CmEvent} values, already
 * acknowledged.
 *
 * <p>Ownership: the caller owns the channel and closes it; {@link #close()} closes it exactly once
 * and refuses (with {@link IllegalStateException}) while ids created on it, or received with a
 * connection request, are still open: close those first. Closing twice is harmless.
 *
 * <p>Threads: {@link #createId()} may be called from any thread. One thread at a time polls (a
 * second concurrent poll throws {@link IllegalStateException}), and {@link #close()} refuses while
 * a poll is in progress, so the descriptor is never closed under a waiting thread; a thread that
 * wants to stop a poller gives {@link #poll(Duration)} a bounded timeout and checks its own flag.
 * The native wait cannot be interrupted with {@link Thread#interrupt()}.
 *
 * <p>The descriptor is non-blocking ({@code O_NONBLOCK}); {@link #fd()} can be handed to an
 * external selector (epoll) that then calls {@code poll(Duration.ZERO)} when it is readable.
 *
 * {@snippet :
 * try (EventChannel channel = EventChannel.open();
 *      CmId listener = channel.createId()) {
 *     listener.bind(new InetSocketAddress("198.18.0.2", 0));
 *     listener.listen(16);
 *     CmEvent request = channel.poll(Duration.ofSeconds(5)).require(CmEventType.CONNECT_REQUEST);
 *     try (CmId connection = request.id()) {
 *         connection.reject(new byte[] {1});
 *     }
 * }
 * }
 */
public final class EventChannel implements AutoCloseable {
    private static final int OPEN = 0;
    private static final int POLLING = 1;
    private static final int CLOSED = 2;

    /** Waits longer than this many milliseconds are split into several native waits. */
    private static final long MAX_WAIT_MS = Integer.MAX_VALUE;

    private final MemorySegment channel;
    private final int fd;
    private final Arena arena;
    private final MemorySegment eventOut;
    private final MemorySegment pollfd;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    /** The open ids of this channel by native address; guarded by {@code this} for changes. */
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();

    private EventChannel(MemorySegment channel) {
        this.channel = channel.reinterpret(rdma_event_channel.sizeof());
        this.fd = rdma_event_channel.fd(this.channel);
        this.arena = Arena.ofShared();
        this.eventOut = arena.allocate(ADDRESS);
        this.pollfd = arena.allocate(Libc.POLLFD);
        pollfd.set(JAVA_INT, Libc.POLLFD_FD, fd);
        pollfd.set(JAVA_SHORT, Libc.POLLFD_EVENTS, Libc.POLLIN);
    }

    /**
     * Opens an event channel ({@code rdma_create_event_channel}, which opens
     * {@code /dev/infiniband/rdma_cm}) and makes its descriptor non-blocking.
     *
     * @throws RdmaCmUnavailableException when librdmacm cannot be loaded
     * @throws RdmaCmException            naming {@code rdma_create_event_channel} and its errno, e.g.
     *                                    ENODEV or ENOENT where the kernel has no RDMA connection manager
     */
    public static EventChannel open() {
        MemorySegment native_ = RdmaCmNative.rdma_create_event_channel();
        EventChannel channel;
        try {
            channel = new EventChannel(native_);
            Libc.setNonBlocking(channel.fd);
        } catch (RuntimeException | Error e) {
            rdmacm_h.rdma_destroy_event_channel(native_);
            throw e;
        }
        RdmaCmCounters.EVENT_CHANNELS.incrementAndGet();
        return channel;
    }

    /** The channel's file descriptor (non-blocking); it stays owned by this channel. */
    public int fd() {
        return fd;
    }

    /**
     * The native {@code struct rdma_event_channel *}, for the raw bindings. Borrowed: valid until
     * {@link #close()}; never destroy it yourself.
     */
    public MemorySegment handle() {
        return channel;
    }

    /**
     * Creates a connection-manager id for reliable connections ({@code rdma_create_id} in the
     * {@code RDMA_PS_TCP} port space, QP type RC) whose events this channel reports.
     *
     * @throws IllegalStateException when the channel is closed
     * @throws RdmaCmException       naming {@code rdma_create_id} and its errno
     */
    public CmId createId() {
        synchronized (this) {
            ensureOpen();
            MemorySegment native_;
            try (Arena temp = Arena.ofConfined()) {
                MemorySegment out = temp.allocate(ADDRESS);
                RdmaCmNative.rdma_create_id(channel, out, MemorySegment.NULL, rdmacm_h.RDMA_PS_TCP());
                native_ = out.get(ADDRESS, 0);
            }
            return register(native_);
        }
    }

    /** Wraps and registers a native id (created by rdma_create_id or received with a connection request). */
    private CmId register(MemorySegment native_) {
        CmId id = new CmId(this, native_);
        ids.put(native_.address(), id);
        RdmaCmCounters.IDS.incrementAndGet();
        return id;
    }

    /** Called by {@link CmId#close()} after {@code rdma_destroy_id}. */
    synchronized void unregister(CmId id) {
        ids.remove(id.address());
    }

    /** How many ids of this channel are open. */
    public int openIds() {
        return ids.size();
    }

    /**
     * Waits up to {@code timeout} for the next event, copies it into a {@link CmEvent} and
     * acknowledges it ({@code rdma_get_cm_event}, then {@code rdma_ack_cm_event}).
     *
     * @param timeout how long to wait; {@link Duration#ZERO} only looks; one too long for a
     *                {@code long} of nanoseconds (about 292 years) waits without limit
     * @return the event, or {@code null} when none arrived in time
     * @throws IllegalStateException when the channel is closed or another thread is polling it
     * @throws RdmaCmException       naming {@code rdma_get_cm_event} or {@code poll} and the errno
     */
    public CmEvent poll(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("negative timeout " + timeout);
        }
        long timeoutNanos;
        try {
            timeoutNanos = timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            timeoutNanos = -1;
        }
        return poll(timeoutNanos);
    }

    /**
     * Waits without limit for the next event, then as {@link #poll(Duration)}.
     *
     * @throws IllegalStateException when the channel is closed or another thread is polling it
     */
    public CmEvent take() {
        return poll(-1L);
    }

    /** Polls with a timeout in nanoseconds, or forever when negative. */
    private CmEvent poll(long timeoutNanos) {
        enterPoll();
        try {
            long deadline = System.nanoTime() + Math.max(timeoutNanos, 0);
            while (true) {
                if (RdmaCmNative.rdma_get_cm_event(channel, eventOut)) {
                    return consume(eventOut.get(ADDRESS, 0));
                }
                int waitMs;
                if (timeoutNanos < 0) {
                    waitMs = -1;
                } else {
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return null;
                    }
                    // round up, so that a wait never ends just before the deadline and spins
                    waitMs = (int) Math.min((remaining + 999_999) / 1_000_000, MAX_WAIT_MS);
                }
                Libc.poll(pollfd, waitMs); // ready, timed out or interrupted: look again
            }
        } finally {
            state.set(OPEN);
        }
    }

    private void enterPoll() {
        if (!state.compareAndSet(OPEN, POLLING)) {
            throw new IllegalStateException(state.get() == CLOSED ? "event channel is closed"
                    : "another thread is polling this event channel");
        }
    }

    /** Copies what the Java value needs out of the native event, then acknowledges it. */
    private CmEvent consume(MemorySegment eventPointer) {
        MemorySegment event = eventPointer.reinterpret(rdma_cm_event.sizeof());
        CmEventType type;
        int status;
        MemorySegment idPointer;
        MemorySegment listenPointer;
        byte[] privateData;
        ConnectionParams params;
        try {
            type = CmEventType.of(rdma_cm_event.event(event));
            status = rdma_cm_event.status(event);
            idPointer = rdma_cm_event.id(event);
            listenPointer = rdma_cm_event.listen_id(event);
            MemorySegment conn = rdma_cm_event.param.conn(rdma_cm_event.param(event));
            int length = Byte.toUnsignedInt(rdma_conn_param.private_data_len(conn));
            MemorySegment data = rdma_conn_param.private_data(conn);
            if (length > 0 && data.address() != 0) {
                privateData = data.reinterpret(length).toArray(JAVA_BYTE);
            } else {
                privateData = new byte[0];
            }
            params = new ConnectionParams(
                    Byte.toUnsignedInt(rdma_conn_param.responder_resources(conn)),
                    Byte.toUnsignedInt(rdma_conn_param.initiator_depth(conn)),
                    rdma_conn_param.flow_control(conn) & 1,
                    rdma_conn_param.retry_count(conn) & 7,
                    rdma_conn_param.rnr_retry_count(conn) & 7,
                    rdma_conn_param.srq(conn) != 0,
                    rdma_conn_param.qp_num(conn) & 0xFF_FFFF);
        } finally {
            RdmaCmNative.rdma_ack_cm_event(event);
        }
        CmId id;
        CmId listenId = null;
        if (type == CmEventType.CONNECT_REQUEST) {
            // librdmacm made a new id for the request; it is the poller's to accept or reject and close
            synchronized (this) {
                id = register(idPointer);
            }
            listenId = ids.get(listenPointer.address());
        } else {
            id = ids.get(idPointer.address());
        }
        if (id == null) {
            throw new IllegalStateException(type.nativeName() + " for a CM id this channel does not know (0x"
                    + Long.toHexString(idPointer.address()) + "): an id created or migrated through the raw bindings?");
        }
        return new CmEvent(type, status, id, listenId, privateData, params);
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return state.get() == CLOSED;
    }

    void ensureOpen() {
        if (state.get() == CLOSED) {
            throw new IllegalStateException("event channel is closed");
        }
    }

    /**
     * Destroys the channel ({@code rdma_destroy_event_channel}) once; later calls do nothing.
     *
     * @throws IllegalStateException while ids of this channel are open (nothing is closed then),
     *                               or while a thread is polling it
     */
    @Override
    public void close() {
        synchronized (this) {
            if (state.get() == CLOSED) {
                return;
            }
            if (!ids.isEmpty()) {
                throw new IllegalStateException("event channel still has " + ids.size()
                        + " open CM id(s); close them before the channel");
            }
            if (!state.compareAndSet(OPEN, CLOSED)) {
                throw new IllegalStateException("a thread is polling this event channel; stop it before closing");
            }
        }
        try {
            rdmacm_h.rdma_destroy_event_channel(channel);
        } finally {
            arena.close();
            RdmaCmCounters.EVENT_CHANNELS.decrementAndGet();
        }
    }

    @Override
    public String toString() {
        return "EventChannel[fd=" + fd + (isClosed() ? ", closed" : "") + "]";
    }
}
