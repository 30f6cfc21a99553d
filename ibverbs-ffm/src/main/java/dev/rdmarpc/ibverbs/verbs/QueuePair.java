package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_ah_attr;
import dev.rdmarpc.ibverbs.raw.ibv_global_route;
import dev.rdmarpc.ibverbs.raw.ibv_qp;
import dev.rdmarpc.ibverbs.raw.ibv_qp_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp_init_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A queue pair ({@code struct ibv_qp}), reliable (RC) or unreliable (UC) connected: created in
 * RESET by {@link ProtectionDomain#createQueuePair}, moved through INIT, RTR and RTS with
 * {@link ConnectionAttributes}, fed with work requests from reusable native batches.
 *
 * {@snippet :
 * QueuePair qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq).maxInlineData(64));
 * QpEndpoint mine = qp.endpoint(1, gidIndex, psn);       // send to the peer, receive theirs
 * qp.connect(new ConnectionAttributes().remote(theirs).localPsn(psn).sgidIndex(gidIndex));
 * wrs.get(0).clear().wrId(1).send(mr, 0, 64).signaled(true);
 * if (qp.postSend(wrs, 0, 1) != 0) { ... } // ENOMEM: send queue full
 * }
 *
 * <h2>Posting</h2>
 * {@link #postSend} and {@link #postReceive} link the chosen range of a batch and make one
 * provider call ({@code ibv_post_send}/{@code ibv_post_recv}), allocating nothing. A full queue is
 * an expected condition, so they <b>return</b> 0 or the provider's errno value (ENOMEM: queue
 * full; EINVAL: a bad work request) with the batch's {@code failedIndex()} naming the first work
 * request not posted. Posting on a closed queue pair throws {@link IllegalStateException}.
 *
 * <h2>Threads</h2>
 * Posting sends and posting receives may happen on two different threads (libibverbs locks each
 * queue), but each {@link SendWorkRequests} batch belongs to one thread. Transitions and queries
 * are thread-safe. Closing must not race posting.
 *
 * <p>Depends on its protection domain, completion queues and shared receive queue; nothing
 * depends on it.
 */
public final class QueuePair extends VerbsResource {
    /** Destroys an adopted queue pair ({@link ProtectionDomain#adoptQueuePair}), e.g. with {@code rdma_destroy_qp}. */
    @FunctionalInterface
    public interface Destroyer {
        /**
         * @param ibvQp the native {@code struct ibv_qp *}
         * @return 0, or an errno value
         */
        int destroy(MemorySegment ibvQp);
    }

    private final ProtectionDomain pd;
    private final Context context;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final SharedReceiveQueue srq;
    private final QpType type;
    private final MemorySegment qp;
    private final long address;
    private final int qpNum;
    private final QueuePairCapabilities caps;
    private final Destroyer destroyer;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;

    QueuePair(ProtectionDomain pd, QueuePairInit init, MemorySegment qp, QueuePairCapabilities granted,
              Destroyer destroyer) {
        super(ResourceKind.QUEUE_PAIR, pd, init.sendCompletionQueue(),
                init.receiveCompletionQueue() == init.sendCompletionQueue() ? null : init.receiveCompletionQueue(),
                init.sharedReceiveQueue());
        this.pd = pd;
        this.context = pd.context();
        this.sendCq = init.sendCompletionQueue();
        this.recvCq = init.receiveCompletionQueue();
        this.srq = init.sharedReceiveQueue();
        this.type = init.type();
        this.qp = qp.reinterpret(ibv_qp.sizeof());
        this.address = qp.address();
        this.qpNum = ibv_qp.qp_num(this.qp);
        this.destroyer = destroyer;
        this.caps = granted;
        MemorySegment ctx = ibv_qp.context(this.qp);
        this.postSendFn = DataPath.op(ctx, DataPath.OPS_POST_SEND, "post_send");
        this.postRecvFn = DataPath.op(ctx, DataPath.OPS_POST_RECV, "post_recv");
        context.registerElement(this.qp, this);
    }

    /** The queue pair number, what the peer needs (24 bits). */
    public int qpNum() {
        return qpNum;
    }

    /** RC or UC. */
    public QpType type() {
        return type;
    }

    /**
     * The queue sizes the provider granted when the queue pair was created (at least what
     * {@link QueuePairInit} asked for, often rounded up), for one made by
     * {@link ProtectionDomain#createQueuePair} and for one made through the connection manager
     * alike. Read once at creation; {@link #queryCapabilities()} asks the provider again.
     */
    public QueuePairCapabilities capabilities() {
        return caps;
    }

    /** The queue sizes as the provider reports them now ({@code ibv_query_qp} with {@code IBV_QP_CAP}). */
    public QueuePairCapabilities queryCapabilities() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            MemorySegment init = ibv_qp_init_attr.allocate(arena);
            VerbsNative.check("ibv_query_qp", ibverbs_h.ibv_query_qp(qp, attr, ibverbs_h.IBV_QP_CAP(), init));
            return QueuePairCapabilities.of(ibv_qp_init_attr.cap(init));
        }
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public CompletionQueue sendCompletionQueue() {
        return sendCq;
    }

    public CompletionQueue receiveCompletionQueue() {
        return recvCq;
    }

    /** The shared receive queue, or {@code null}. */
    public SharedReceiveQueue sharedReceiveQueue() {
        return srq;
    }

    /** The native {@code struct ibv_qp *}. */
    public MemorySegment segment() {
        return qp;
    }

    /**
     * What the peer needs to connect to this queue pair: its QPN, {@code psn} (the first PSN this
     * side will send: pass the same to {@link ConnectionAttributes#localPsn}), the GID at
     * {@code gidIndex} of {@code port} and the port's LID.
     */
    public QpEndpoint endpoint(int port, int gidIndex, int psn) {
        ensureOpen();
        Gid gid = context.gid(port, gidIndex).gid();
        return new QpEndpoint(qpNum, psn, gid, context.queryPort(port).lid());
    }

    /** The current state ({@code ibv_query_qp}). */
    public QpState state() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            MemorySegment init = ibv_qp_init_attr.allocate(arena);
            VerbsNative.check("ibv_query_qp", ibverbs_h.ibv_query_qp(qp, attr, ibverbs_h.IBV_QP_STATE(), init));
            return QpState.of(ibv_qp_attr.qp_state(attr));
        }
    }

    /** RESET -> INIT: port, P_Key index and remote access flags. */
    public void toInit(ConnectionAttributes a) {
        a.validate();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            ibv_qp_attr.qp_state(attr, QpState.INIT.value());
            ibv_qp_attr.pkey_index(attr, (short) a.pkeyIndex());
            ibv_qp_attr.port_num(attr, (byte) a.port());
            ibv_qp_attr.qp_access_flags(attr, a.accessFlags());
            modify(attr, ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_PKEY_INDEX() | ibverbs_h.IBV_QP_PORT()
                    | ibverbs_h.IBV_QP_ACCESS_FLAGS(), "INIT");
        }
    }

    /**
     * INIT -> RTR: the peer's QPN and PSN, the path (MTU, GRH with GID index, hop limit, traffic
     * class; LID on InfiniBand), responder resources and the RNR timer.
     *
     * @throws IllegalArgumentException without a {@link ConnectionAttributes#remote remote}, or on
     *                                  RoCE without an sgid index or local address
     */
    public void toRtr(ConnectionAttributes a) {
        a.validate();
        QpEndpoint remote = a.remote();
        if (remote == null) {
            throw new IllegalArgumentException("RTR needs the remote endpoint (ConnectionAttributes.remote)");
        }
        PortAttributes port = context.queryPort(a.port());
        int sgid = a.sgidIndex();
        if (sgid < 0 && a.localAddress() != null) {
            sgid = context.gidFor(a.port(), a.localAddress()).index();
        }
        boolean grh = sgid >= 0 || port.isEthernet();
        if (port.isEthernet() && sgid < 0) {
            throw new IllegalArgumentException(context.name() + " port " + a.port() + " is RoCE: set "
                    + "ConnectionAttributes.sgidIndex or localAddress to pick the GID to send from");
        }
        Mtu mtu = a.pathMtu() == null ? port.activeMtu() : a.pathMtu();
        DeviceAttributes dev = context.deviceAttributes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            ibv_qp_attr.qp_state(attr, QpState.RTR.value());
            ibv_qp_attr.path_mtu(attr, mtu.value());
            ibv_qp_attr.dest_qp_num(attr, remote.qpNum());
            ibv_qp_attr.rq_psn(attr, remote.psn());
            ibv_qp_attr.max_dest_rd_atomic(attr, (byte) Math.min(a.maxDestReadAtomic(), dev.maxQpRdAtom()));
            ibv_qp_attr.min_rnr_timer(attr, (byte) a.minRnrTimer());
            MemorySegment ah = ibv_qp_attr.ah_attr(attr);
            ibv_ah_attr.dlid(ah, (short) remote.lid());
            ibv_ah_attr.sl(ah, (byte) a.serviceLevel());
            ibv_ah_attr.src_path_bits(ah, (byte) 0);
            ibv_ah_attr.port_num(ah, (byte) a.port());
            if (grh) {
                ibv_ah_attr.is_global(ah, (byte) 1);
                MemorySegment route = ibv_ah_attr.grh(ah);
                remote.gid().write(ibv_global_route.dgid(route), 0);
                ibv_global_route.sgid_index(route, (byte) sgid);
                ibv_global_route.hop_limit(route, (byte) a.hopLimit());
                ibv_global_route.traffic_class(route, (byte) a.trafficClass());
                ibv_global_route.flow_label(route, a.flowLabel());
            }
            int mask = ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_AV() | ibverbs_h.IBV_QP_PATH_MTU()
                    | ibverbs_h.IBV_QP_DEST_QPN() | ibverbs_h.IBV_QP_RQ_PSN();
            if (type == QpType.RC) {
                mask |= ibverbs_h.IBV_QP_MAX_DEST_RD_ATOMIC() | ibverbs_h.IBV_QP_MIN_RNR_TIMER();
            }
            modify(attr, mask, "RTR");
        }
    }

    /** RTR -> RTS: our first PSN, and for RC the ACK timeout, retry counts and initiator depth. */
    public void toRts(ConnectionAttributes a) {
        a.validate();
        DeviceAttributes dev = context.deviceAttributes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            ibv_qp_attr.qp_state(attr, QpState.RTS.value());
            ibv_qp_attr.sq_psn(attr, a.localPsn());
            ibv_qp_attr.timeout(attr, (byte) a.timeout());
            ibv_qp_attr.retry_cnt(attr, (byte) a.retryCount());
            ibv_qp_attr.rnr_retry(attr, (byte) a.rnrRetry());
            ibv_qp_attr.max_rd_atomic(attr, (byte) Math.min(a.maxReadAtomic(), dev.maxQpInitRdAtom()));
            int mask = ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_SQ_PSN();
            if (type == QpType.RC) {
                mask |= ibverbs_h.IBV_QP_TIMEOUT() | ibverbs_h.IBV_QP_RETRY_CNT() | ibverbs_h.IBV_QP_RNR_RETRY()
                        | ibverbs_h.IBV_QP_MAX_QP_RD_ATOMIC();
            }
            modify(attr, mask, "RTS");
        }
    }

    /** INIT (when in RESET), RTR and RTS in one go. */
    public void connect(ConnectionAttributes a) {
        a.validate();
        if (state() == QpState.RESET) {
            toInit(a);
        }
        toRtr(a);
        toRts(a);
    }

    /**
     * Any state -> ERR: outstanding and later-posted work requests complete with
     * {@link WcStatus#WR_FLUSH_ERR}. The way to drain a queue pair before closing it.
     */
    public void toError() {
        toState(QpState.ERR);
    }

    /** Any state -> RESET: forgets all work requests (without completions); ready for INIT again. */
    public void toReset() {
        toState(QpState.RESET);
    }

    private void toState(QpState state) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            ibv_qp_attr.qp_state(attr, state.value());
            modify(attr, ibverbs_h.IBV_QP_STATE(), state.name());
        }
    }

    /**
     * {@code ibv_modify_qp} with a caller-filled {@code struct ibv_qp_attr} and mask, e.g. what
     * {@code rdma_init_qp_attr} produced.
     *
     * @throws dev.rdmarpc.ibverbs.VerbsException when the provider refuses
     */
    public void modify(MemorySegment ibvQpAttr, int attrMask) {
        modify(ibvQpAttr, attrMask, null);
    }

    private void modify(MemorySegment attr, int mask, String to) {
        ensureOpen();
        int rc = ibverbs_h.ibv_modify_qp(qp, attr, mask);
        VerbsNative.check(to == null ? "ibv_modify_qp" : "ibv_modify_qp(" + to + ")", rc);
    }

    /**
     * Posts send work requests {@code first} to {@code first + count - 1} of {@code wrs} in one call.
     * Allocates nothing.
     *
     * @return 0, or the provider's errno value (ENOMEM: send queue full) with {@code wrs.failedIndex()} set
     * @throws IllegalStateException when this queue pair is closed
     */
    public int postSend(SendWorkRequests wrs, int first, int count) {
        ensureOpen();
        long head = wrs.link(first, count);
        return DataPath.post(postSendFn, address, head, wrs.badWrAddress());
    }

    /** {@link #postSend(SendWorkRequests, int, int)} from entry 0. */
    public int postSend(SendWorkRequests wrs, int count) {
        return postSend(wrs, 0, count);
    }

    /**
     * Posts receive work requests {@code first} to {@code first + count - 1} of {@code wrs} in one
     * call. Allocates nothing.
     *
     * @return 0, or the provider's errno value (ENOMEM: receive queue full) with {@code wrs.failedIndex()} set
     * @throws IllegalStateException when closed, or when the queue pair receives from a shared receive queue
     */
    public int postReceive(ReceiveWorkRequests wrs, int first, int count) {
        ensureOpen();
        if (srq != null) {
            throw new IllegalStateException(this + " receives from " + srq + ": post receives there");
        }
        long head = wrs.link(first, count);
        return DataPath.post(postRecvFn, address, head, wrs.badWrAddress());
    }

    /** {@link #postReceive(ReceiveWorkRequests, int, int)} from entry 0. */
    public int postReceive(ReceiveWorkRequests wrs, int count) {
        return postReceive(wrs, 0, count);
    }

    @Override
    void destroy() {
        int rc = destroyer == null ? ibverbs_h.ibv_destroy_qp(qp) : destroyer.destroy(qp);
        VerbsNative.check(destroyer == null ? "ibv_destroy_qp" : "destroy adopted queue pair", rc);
        context.unregisterElement(qp);
    }

    @Override
    public String toString() {
        return "QueuePair[" + context.name() + ", " + type + " qpn " + qpNum + "]";
    }
}
