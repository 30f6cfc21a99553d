package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_device;
import dev.rdmarpc.ibverbs.raw.ibv_qp_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp_init_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QpState;
import dev.rdmarpc.ibverbs.verbs.QpType;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairCapabilities;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.rdmacm.raw.rdma_addr;
import dev.rdmarpc.rdmacm.raw.rdma_cm_id;
import dev.rdmarpc.rdmacm.raw.rdma_conn_param;
import dev.rdmarpc.rdmacm.raw.rdma_route;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A connection-manager id ({@code struct rdma_cm_id}) for one reliable connection (RC, port space
 * {@code RDMA_PS_TCP}): the RDMA counterpart of a socket. Made by {@link EventChannel#createId()},
 * or handed out by a {@link CmEventType#CONNECT_REQUEST} event; its events come from that channel.
 *
 * <p>Client: {@link #resolveAddress} (wait for {@code ADDR_RESOLVED}), {@link #resolveRoute} (wait
 * for {@code ROUTE_RESOLVED}), {@link #createQueuePair}, {@link #connect} (wait for
 * {@code ESTABLISHED}). Server: {@link #bind}, {@link #listen}, and for each
 * {@code CONNECT_REQUEST}: {@link #createQueuePair} on the new id, then {@link #accept} (wait for
 * {@code ESTABLISHED}) or {@link #reject}. Either side: {@link #disconnect} (both see
 * {@code DISCONNECTED}). The operations return when the request is made; the outcome is an event.
 *
 * <p>Ownership: the caller owns the id (also one received with a connection request, accepted or
 * not) and closes it. {@link #close()} destroys it exactly once ({@code rdma_destroy_id}), is
 * harmless twice, and refuses with {@link IllegalStateException} while the id still has a queue
 * pair: close the queue pair first. The id must be closed before its {@link EventChannel}.
 *
 * <p>Threads: the operations may be called from any thread, but not concurrently with
 * {@link #close()}: after close the id is gone and every operation throws
 * {@link IllegalStateException}.
 */
public final class CmId implements AutoCloseable {
    /** Private data a connection request carries on InfiniBand and RoCE ({@code rdma_connect}, RDMA_PS_TCP). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    /** Private data an accept carries on InfiniBand and RoCE ({@code rdma_accept}). */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;
    /** Private data a reject carries on InfiniBand and RoCE ({@code rdma_reject}). */
    public static final int MAX_REJECT_PRIVATE_DATA = 148;
    /** The most private data {@code struct rdma_conn_param} can say it holds (its length is a {@code uint8_t}). */
    public static final int MAX_PRIVATE_DATA = 255;

    private static final int IBV_TRANSPORT_IB = 0;

    private final EventChannel channel;
    private final MemorySegment id;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The queue pair on this id, or {@code null}; guarded by {@code this}. */
    private QueuePair queuePair;

    CmId(EventChannel channel, MemorySegment id) {
        this.channel = channel;
        this.id = id.reinterpret(rdma_cm_id.sizeof());
    }

    /** The channel that reports this id's events. */
    public EventChannel channel() {
        return channel;
    }

    /**
     * The native {@code struct rdma_cm_id *}, for the raw bindings. Borrowed: valid until
     * {@link #close()}; never destroy it yourself.
     */
    public MemorySegment handle() {
        return id;
    }

    long address() {
        return id.address();
    }

    // ---------------------------------------------------------------- addresses and routes

    /**
     * Binds the id to a local IP address and port ({@code rdma_bind_addr}); port 0 picks a free
     * port, which {@link #localAddress()} then reports. Binding to an address of an RDMA device's
     * netdev also binds the id to that device.
     *
     * @throws RdmaCmException naming {@code rdma_bind_addr} and its errno (EADDRINUSE,
     *                         EADDRNOTAVAIL, ...)
     */
    public void bind(InetSocketAddress local) {
        ensureOpen();
        try (Arena temp = Arena.ofConfined()) {
            RdmaCmNative.rdma_bind_addr(id, SocketAddresses.toNative(local, temp));
        }
    }

    /**
     * Listens for connection requests ({@code rdma_listen}); each arrives as a
     * {@link CmEventType#CONNECT_REQUEST} event with a new id.
     *
     * @param backlog the most pending requests; must be positive
     */
    public void listen(int backlog) {
        if (backlog <= 0) {
            throw new IllegalArgumentException("backlog must be positive, was " + backlog);
        }
        ensureOpen();
        RdmaCmNative.rdma_listen(id, backlog);
    }

    /**
     * Starts resolving {@code destination} to an RDMA address and binds the id to a local device
     * ({@code rdma_resolve_addr}). The outcome is {@link CmEventType#ADDR_RESOLVED} or
     * {@link CmEventType#ADDR_ERROR} (status: the negated errno, e.g. ETIMEDOUT when nobody answers
     * within {@code timeout}).
     *
     * @param source      the local address to use, or {@code null} to let the routing table choose
     * @param destination the peer's IP address and port
     * @param timeout     at most this long (1 ms to {@link Integer#MAX_VALUE} ms)
     * @throws RdmaCmException naming {@code rdma_resolve_addr} when it fails at once (ENETUNREACH,
     *                         ENODEV, ...)
     */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        int ms = timeoutMillis(timeout);
        ensureOpen();
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.toNative(source, temp);
            RdmaCmNative.rdma_resolve_addr(id, src, SocketAddresses.toNative(destination, temp), ms);
        }
    }

    /**
     * Starts resolving the route to the resolved address ({@code rdma_resolve_route}); the outcome
     * is {@link CmEventType#ROUTE_RESOLVED} or {@link CmEventType#ROUTE_ERROR}.
     *
     * @param timeout at most this long (1 ms to {@link Integer#MAX_VALUE} ms)
     */
    public void resolveRoute(Duration timeout) {
        int ms = timeoutMillis(timeout);
        ensureOpen();
        RdmaCmNative.rdma_resolve_route(id, ms);
    }

    /** The local address ({@code id->route.addr.src_addr}), or {@code null} while unbound. */
    public InetSocketAddress localAddress() {
        ensureOpen();
        return SocketAddresses.fromNative(rdma_addr.src_storage(routeAddr()));
    }

    /** The peer's address ({@code id->route.addr.dst_addr}), or {@code null} while unknown. */
    public InetSocketAddress remoteAddress() {
        ensureOpen();
        return SocketAddresses.fromNative(rdma_addr.dst_storage(routeAddr()));
    }

    private MemorySegment routeAddr() {
        return rdma_route.addr(rdma_cm_id.route(id));
    }

    /**
     * The verbs context of the device the id is bound to ({@code id->verbs}, opened and owned by
     * librdmacm), or {@link MemorySegment#NULL} until the id is bound to a device (by
     * {@link #bind} to a device's address, address resolution, or a connection request).
     */
    public MemorySegment verbsContext() {
        ensureOpen();
        return rdma_cm_id.verbs(id);
    }

    /** The name of the device the id is bound to (e.g. {@code rxe0}), or {@code null} while unbound. */
    public String deviceName() {
        MemorySegment context = verbsContext();
        if (context.address() == 0) {
            return null;
        }
        MemorySegment device = ibv_context.device(context.reinterpret(ibv_context.sizeof()));
        return ibverbs_h.ibv_get_device_name(device).reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** The port of the device the id is bound to (from 1), or 0 while unbound. */
    public int portNumber() {
        ensureOpen();
        return Byte.toUnsignedInt(rdma_cm_id.port_num(id));
    }

    // ---------------------------------------------------------------- the queue pair

    /**
     * Creates the connection's RC queue pair on the device the id is bound to
     * ({@code rdma_create_qp}); librdmacm moves it to INIT now, and {@link #connect}/{@link #accept}
     * take it through RTR to RTS, so there are no state transitions to do by hand. The result is
     * the verbs layer's {@link QueuePair}: post and poll on it as on any other.
     *
     * <p>{@code pd} and the completion queues in {@code init} must be made on the id's device:
     * wrap the context librdmacm opened, {@code Context.wrap(id.verbsContext())}, which stays open
     * as long as librdmacm is loaded (ids on one device share it, so one wrapper per device is
     * enough). The queue pair depends on the domain and completion queues like any other, and this
     * id depends on it: close the queue pair ({@code rdma_destroy_qp}) before the id.
     *
     * @param pd   the protection domain, on {@link #verbsContext()}
     * @param init type RC, completion queues on the same device, queue sizes
     * @throws IllegalStateException    when the id is not bound to a device yet (create the queue
     *                                  pair after {@code ADDR_RESOLVED} / {@code ROUTE_RESOLVED} on a
     *                                  client, or on the id of a {@code CONNECT_REQUEST}), or
     *                                  already has a queue pair
     * @throws IllegalArgumentException when {@code pd} is on another device, the type is not RC, or
     *                                  {@code init} is invalid
     * @throws RdmaCmException          naming {@code rdma_create_qp} and its errno
     */
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init) {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(init, "init");
        if (init.type() != QpType.RC) {
            throw new IllegalArgumentException("a CM id in the RDMA_PS_TCP port space carries an RC queue pair, not "
                    + init.type());
        }
        synchronized (this) {
            ensureOpen();
            if (queuePair != null) {
                throw new IllegalStateException(this + " already has a queue pair: " + queuePair);
            }
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.address() == 0) {
                throw new IllegalStateException(this + " is not bound to an RDMA device yet: create the queue pair"
                        + " after ADDR_RESOLVED/ROUTE_RESOLVED, or on the id of a CONNECT_REQUEST");
            }
            Context context = pd.context();
            if (context.segment().address() != verbs.address()) {
                throw new IllegalArgumentException(pd + " is on " + context.name() + " (ibv_context 0x"
                        + Long.toHexString(context.segment().address()) + "), but " + this + " is bound to "
                        + deviceName() + " (ibv_context 0x" + Long.toHexString(verbs.address())
                        + "); allocate it on Context.wrap(id.verbsContext())");
            }
            init.validate(pd);
            MemorySegment qp;
            QueuePairCapabilities granted;
            try (Arena temp = Arena.ofConfined()) {
                MemorySegment attr = init.toNative(temp);
                RdmaCmNative.rdma_create_qp(id, pd.segment(), attr);
                qp = rdma_cm_id.qp(id);
                // rdma_create_qp copies the provider's granted sizes back into attr->cap
                granted = QueuePairCapabilities.of(ibv_qp_init_attr.cap(attr));
            }
            QueuePair adopted;
            try {
                adopted = pd.adoptQueuePair(init, granted, qp, this::destroyQueuePair);
            } catch (RuntimeException | Error e) {
                rdmacm_h.rdma_destroy_qp(id);
                throw e;
            }
            queuePair = adopted;
            RdmaCmCounters.QUEUE_PAIRS.incrementAndGet();
            return adopted;
        }
    }

    /** The queue pair made by {@link #createQueuePair} and not yet closed, or {@code null}. */
    public synchronized QueuePair queuePair() {
        return queuePair;
    }

    /** The destroyer of the adopted queue pair: runs once, from {@link QueuePair#close()}. */
    private int destroyQueuePair(MemorySegment ibvQp) {
        synchronized (this) {
            rdmacm_h.rdma_destroy_qp(id); // ibv_destroy_qp, then id->qp = NULL
            queuePair = null;
        }
        RdmaCmCounters.QUEUE_PAIRS.decrementAndGet();
        return 0;
    }

    // ---------------------------------------------------------------- connections

    /**
     * Asks the resolved peer for a connection ({@code rdma_connect}). With a queue pair on the id
     * the outcome is {@link CmEventType#ESTABLISHED} (carrying the server's accept private data),
     * {@link CmEventType#REJECTED} (carrying its reject private data), {@code UNREACHABLE} or
     * {@code CONNECT_ERROR}.
     *
     * <p>With a queue pair the caller made itself (not by {@link #createQueuePair}), name its number
     * in {@code params} ({@link ConnectionParams#withQpNumber}); the outcome is then
     * {@link CmEventType#CONNECT_RESPONSE}, after which the caller moves the queue pair to RTR and RTS
     * ({@link #moveQueuePair}) and calls {@link #establish()}.
     *
     * @param params      the connection's parameters, or {@code null} to leave them all to librdmacm
     *                    ({@code rdma_connect(id, NULL)}: the device's largest RDMA read depths, no
     *                    private data)
     * @param privateData sent with the request; up to {@value #MAX_CONNECT_PRIVATE_DATA} bytes on
     *                    InfiniBand and RoCE, or {@code null} for none. The server sees them first in
     *                    its event's private data, padded with zeros. Needs {@code params}.
     * @throws IllegalArgumentException when the private data is longer than the transport carries,
     *                                  or is given without {@code params}
     * @throws RdmaCmException          naming {@code rdma_connect} and its errno
     */
    public void connect(ConnectionParams params, byte[] privateData) {
        checkPrivateData("rdma_connect", params, privateData, MAX_CONNECT_PRIVATE_DATA);
        try (Arena temp = Arena.ofConfined()) {
            RdmaCmNative.rdma_connect(id, connParam(params, privateData, temp));
        }
    }

    /**
     * Accepts the connection request this id came with ({@code rdma_accept}); the queue pair
     * (created on this id before) moves to RTS and both sides see
     * {@link CmEventType#ESTABLISHED}, the client with {@code privateData}.
     *
     * <p>With a queue pair the caller made itself, move it to RTR and RTS first
     * ({@link #moveQueuePair}) and name its number in {@code params}
     * ({@link ConnectionParams#withQpNumber}).
     *
     * @param params      the connection's parameters, or {@code null} to leave them to librdmacm
     *                    ({@code rdma_accept(id, NULL)}, as rdma-core's {@code rping} server does: the
     *                    RDMA read depths the client asked for, capped by the device, no private data)
     * @param privateData up to {@value #MAX_ACCEPT_PRIVATE_DATA} bytes on InfiniBand and RoCE, or
     *                    {@code null}. Needs {@code params}.
     * @throws IllegalArgumentException when the private data is longer than the transport carries,
     *                                  or is given without {@code params}
     * @throws RdmaCmException          naming {@code rdma_accept} and its errno
     */
    public void accept(ConnectionParams params, byte[] privateData) {
        checkPrivateData("rdma_accept", params, privateData, MAX_ACCEPT_PRIVATE_DATA);
        try (Arena temp = Arena.ofConfined()) {
            RdmaCmNative.rdma_accept(id, connParam(params, privateData, temp));
        }
    }

    /**
     * Rejects the connection request this id came with ({@code rdma_reject}); the client sees
     * {@link CmEventType#REJECTED} with {@code privateData}. The id must still be closed.
     *
     * @param privateData up to {@value #MAX_REJECT_PRIVATE_DATA} bytes on InfiniBand and RoCE, or
     *                    {@code null}
     * @throws IllegalArgumentException when the private data is longer than the transport carries
     * @throws RdmaCmException          naming {@code rdma_reject} and its errno
     */
    public void reject(byte[] privateData) {
        checkPrivateData("rdma_reject", ConnectionParams.DEFAULT, privateData, MAX_REJECT_PRIVATE_DATA);
        int length = privateData == null ? 0 : privateData.length;
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment data = length == 0 ? MemorySegment.NULL : temp.allocateFrom(JAVA_BYTE, privateData);
            RdmaCmNative.rdma_reject(id, data, (byte) length);
        }
    }

    /**
     * Moves a queue pair the caller created itself ({@link ProtectionDomain#createQueuePair}, not
     * {@link #createQueuePair}) to {@code state} with the attributes the connection manager knows for
     * this id: {@code rdma_init_qp_attr} fills a {@code struct ibv_qp_attr} and its mask (port, P_Key,
     * access flags for INIT; path, remote QP number, PSN, read depths for RTR; timeouts and retries
     * for RTS), then {@code ibv_modify_qp} applies them.
     *
     * <p>The steps, as C programs take them with {@code rdma_init_qp_attr}:
     * <ul>
     *   <li>client: after {@code ROUTE_RESOLVED}, {@code moveQueuePair(qp, INIT)} (receives may be
     *       posted from here on); {@link #connect} with {@code params.withQpNumber(qp.qpNum())}; on
     *       {@link CmEventType#CONNECT_RESPONSE}, {@code moveQueuePair(qp, RTR)},
     *       {@code moveQueuePair(qp, RTS)}, then {@link #establish()};</li>
     *   <li>server: on {@code CONNECT_REQUEST}, {@code moveQueuePair(qp, INIT)}, {@code RTR},
     *       {@code RTS}, then {@link #accept} with {@code params.withQpNumber(qp.qpNum())}; then
     *       {@link CmEventType#ESTABLISHED}.</li>
     * </ul>
     * Moving to RTR applies the INIT attributes again first (INIT to INIT), as librdmacm does for its
     * own queue pairs: before the connection exists the CM knows no remote access rights, so an INIT
     * taken before {@link #connect} grants the peer no RDMA READ or WRITE; the second INIT, once the
     * peer has answered, grants what the connection negotiated.
     *
     * <p>The queue pair is the caller's, not the id's: close it yourself; the id does not refuse to close
     * because of it. To disconnect, move it to ERR ({@link QueuePair#toError()}) and {@link #disconnect}.
     *
     * @param qp    a queue pair on the device this id is bound to
     * @param state INIT, RTR or RTS
     * @throws IllegalArgumentException for another state, or a queue pair of another device
     * @throws IllegalStateException    when the id is not bound to a device yet
     * @throws RdmaCmException          naming {@code rdma_init_qp_attr} and its errno (e.g. EINVAL
     *                                  for RTR before the peer's answer is known)
     * @throws dev.rdmarpc.ibverbs.VerbsException naming {@code ibv_modify_qp} when the provider refuses
     */
    public void moveQueuePair(QueuePair qp, QpState state) {
        Objects.requireNonNull(qp, "qp");
        Objects.requireNonNull(state, "state");
        if (state != QpState.INIT && state != QpState.RTR && state != QpState.RTS) {
            throw new IllegalArgumentException("rdma_init_qp_attr knows the attributes of INIT, RTR and RTS, not "
                    + state + "; use QueuePair.toError() or toReset()");
        }
        ensureOpen();
        MemorySegment verbs = rdma_cm_id.verbs(id);
        if (verbs.address() == 0) {
            throw new IllegalStateException(this + " is not bound to an RDMA device yet");
        }
        long qpContext = qp.protectionDomain().context().segment().address();
        if (qpContext != verbs.address()) {
            throw new IllegalArgumentException(qp + " is on " + qp.protectionDomain().context().name() + ", but "
                    + this + " is bound to " + deviceName());
        }
        if (state == QpState.RTR) {
            applyCmAttributes(qp, QpState.INIT); // the access rights the connection negotiated
        }
        applyCmAttributes(qp, state);
    }

    /** {@code rdma_init_qp_attr} for {@code state}, then {@code ibv_modify_qp} with what it filled in. */
    private void applyCmAttributes(QueuePair qp, QpState state) {
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(temp);
            attr.fill((byte) 0);
            ibv_qp_attr.qp_state(attr, state.value());
            MemorySegment mask = temp.allocate(JAVA_INT);
            RdmaCmNative.rdma_init_qp_attr(id, attr, mask);
            qp.modify(attr, mask.get(JAVA_INT, 0));
        }
    }

    /**
     * Completes a connection whose queue pair the caller drives ({@code rdma_establish}): the client
     * calls it after {@link CmEventType#CONNECT_RESPONSE} and moving its queue pair to RTS
     * ({@link #moveQueuePair}); the server then sees {@link CmEventType#ESTABLISHED}.
     *
     * @throws RdmaCmException naming {@code rdma_establish} and its errno
     */
    public void establish() {
        ensureOpen();
        RdmaCmNative.rdma_establish(id);
    }

    /**
     * Disconnects ({@code rdma_disconnect}): the queue pair moves to the error state (flushing its
     * posted work requests) and both sides see {@link CmEventType#DISCONNECTED}.
     *
     * <p>On InfiniBand and RoCE this sends a disconnect request; the peer sees
     * {@code DISCONNECTED} at once, and should answer with its own {@code disconnect()} (which
     * sends the reply): the side that disconnected first sees its {@code DISCONNECTED} when that
     * reply arrives, or only when the request times out. So: on a {@code DISCONNECTED} event for a
     * connection you did not disconnect yourself, call {@code disconnect()}.
     *
     * @throws RdmaCmException naming {@code rdma_disconnect} and its errno (EINVAL when not connected)
     */
    public void disconnect() {
        ensureOpen();
        RdmaCmNative.rdma_disconnect(id);
    }

    // ---------------------------------------------------------------- options

    /** Allows binding to an address still in use ({@code RDMA_OPTION_ID_REUSEADDR}); before {@link #bind}. */
    public void setReuseAddress(boolean reuse) {
        ensureOpen();
        try (Arena temp = Arena.ofConfined()) {
            RdmaCmNative.rdma_set_option(id, rdmacm_h.RDMA_OPTION_ID(), rdmacm_h.RDMA_OPTION_ID_REUSEADDR(),
                    temp.allocateFrom(JAVA_INT, reuse ? 1 : 0), 4);
        }
    }

    /** The type of service of the connection's packets ({@code RDMA_OPTION_ID_TOS}, 0..255); before resolving the route. */
    public void setTypeOfService(int tos) {
        if (tos < 0 || tos > 255) {
            throw new IllegalArgumentException("type of service must be in 0..255, was " + tos);
        }
        ensureOpen();
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment value = temp.allocateFrom(JAVA_BYTE, (byte) tos);
            RdmaCmNative.rdma_set_option(id, rdmacm_h.RDMA_OPTION_ID(), rdmacm_h.RDMA_OPTION_ID_TOS(), value, 1);
        }
    }

    // ---------------------------------------------------------------- helpers

    private MemorySegment connParam(ConnectionParams params, byte[] privateData, Arena temp) {
        if (params == null) {
            return MemorySegment.NULL;
        }
        MemorySegment p = rdma_conn_param.allocate(temp);
        p.fill((byte) 0);
        if (privateData != null && privateData.length > 0) {
            rdma_conn_param.private_data(p, temp.allocateFrom(JAVA_BYTE, privateData));
            rdma_conn_param.private_data_len(p, (byte) privateData.length);
        }
        rdma_conn_param.responder_resources(p, (byte) params.responderResources());
        rdma_conn_param.initiator_depth(p, (byte) params.initiatorDepth());
        rdma_conn_param.flow_control(p, (byte) params.flowControl());
        rdma_conn_param.retry_count(p, (byte) params.retryCount());
        rdma_conn_param.rnr_retry_count(p, (byte) params.rnrRetryCount());
        rdma_conn_param.srq(p, (byte) (params.srq() ? 1 : 0));
        rdma_conn_param.qp_num(p, params.qpNumber());
        return p;
    }

    /**
     * Refuses private data longer than a {@code uint8_t} length can say, and, on an InfiniBand or
     * RoCE device, longer than the transport's field (the kernel would answer EINVAL).
     */
    private void checkPrivateData(String operation, ConnectionParams params, byte[] privateData, int transportMax) {
        ensureOpen();
        if (params == null && privateData != null && privateData.length > 0) {
            throw new IllegalArgumentException(operation + ": private data needs connection parameters to travel in;"
                    + " pass ConnectionParams.DEFAULT (or your own) instead of null");
        }
        checkPrivateDataLength(operation, privateData == null ? 0 : privateData.length, transportMax,
                isInfinibandTransport());
    }

    static void checkPrivateDataLength(String operation, int length, int transportMax, boolean infiniband) {
        if (length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException(operation + ": " + length + " bytes of private data; at most "
                    + MAX_PRIVATE_DATA + " fit in struct rdma_conn_param");
        }
        if (infiniband && length > transportMax) {
            throw new IllegalArgumentException(operation + ": " + length + " bytes of private data; InfiniBand and "
                    + "RoCE carry at most " + transportMax);
        }
    }

    private boolean isInfinibandTransport() {
        MemorySegment context = rdma_cm_id.verbs(id);
        if (context.address() == 0) {
            return false;
        }
        MemorySegment device = ibv_context.device(context.reinterpret(ibv_context.sizeof()))
                .reinterpret(ibv_device.sizeof());
        return ibv_device.transport_type(device) == IBV_TRANSPORT_IB;
    }

    static int timeoutMillis(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        if (timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("timeout must be at most " + Integer.MAX_VALUE + " ms, was " + timeout);
        }
        return (int) Math.max(1, timeout.toMillis());
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("CM id is closed");
        }
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Destroys the id ({@code rdma_destroy_id}) once; later calls do nothing. A connected id is
     * disconnected by the kernel on the way.
     *
     * @throws IllegalStateException while the id has a queue pair (nothing is closed then)
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed.get()) {
                return;
            }
            if (queuePair != null) {
                throw new IllegalStateException(this + " still has a queue pair (" + queuePair
                        + "); close it before the id");
            }
            closed.set(true);
        }
        try {
            RdmaCmNative.rdma_destroy_id(id);
        } finally {
            channel.unregister(this);
            RdmaCmCounters.IDS.decrementAndGet();
        }
    }

    @Override
    public String toString() {
        return "CmId[0x" + Long.toHexString(id.address()) + (isClosed() ? ", closed" : "") + "]";
    }
}
