package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_mw_bind_info;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;

/**
 * A reusable batch of send work requests in native memory: {@code capacity} {@code struct ibv_send_wr}
 * with {@code maxSge} {@code struct ibv_sge} each, allocated once (per queue pair, typically) and
 * filled, linked and posted again and again without allocating.
 *
 * {@snippet :
 * SendWorkRequests wrs = new SendWorkRequests(16, 2);
 * wrs.get(0).clear().wrId(1).write(mr, 0, 4096, remoteAddress, remoteKey);
 * wrs.get(1).clear().wrId(2).send(mr, 4096, 64).signaled(true);
 * int rc = qp.postSend(wrs, 0, 2);          // one ibv_post_send for both, chained
 * if (rc != 0) { ... wrs.failedIndex() ... } // ENOMEM: the send queue is full
 * }
 *
 * <p>{@link #get(int)} returns <b>the same</b> {@link SendWorkRequest} flyweight for every index,
 * positioned at that index (no allocation): finish one entry before getting the next. Posting links
 * the chosen range through the {@code next} pointers; the {@code sg_list} of each entry points at its
 * own SGEs, set once.
 *
 * <p>Owns its native memory (shared arena: any thread may post it); {@link #close()} frees it once.
 * Not thread-safe: one thread fills and posts a batch at a time.
 */
public final class SendWorkRequests extends WorkRequestBatch {
    /** Size and field offsets of {@code struct ibv_send_wr}, read once from the generated layout. */
    static final class Offsets {
        static final long WR_SIZE = ibv_send_wr.sizeof();
        static final long WR_ID = ibv_send_wr.wr_id$offset();
        static final long NEXT = ibv_send_wr.next$offset();
        static final long SG_LIST = ibv_send_wr.sg_list$offset();
        static final long NUM_SGE = ibv_send_wr.num_sge$offset();
        static final long OPCODE = ibv_send_wr.opcode$offset();
        static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
        static final long IMM_DATA = ibv_send_wr.imm_data$offset();
        /** A union with {@link #IMM_DATA}: the same four bytes, but in host order. */
        static final long INVALIDATE_RKEY = ibv_send_wr.invalidate_rkey$offset();
        static final long WR = ibv_send_wr.wr$offset();
        static final long RDMA_REMOTE_ADDR = WR + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.remote_addr$offset();
        static final long RDMA_RKEY = WR + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.rkey$offset();
        static final long ATOMIC_REMOTE_ADDR = WR + ibv_send_wr.wr.atomic$offset()
                + ibv_send_wr.wr.atomic.remote_addr$offset();
        static final long ATOMIC_COMPARE_ADD = WR + ibv_send_wr.wr.atomic$offset()
                + ibv_send_wr.wr.atomic.compare_add$offset();
        static final long ATOMIC_SWAP = WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.swap$offset();
        static final long ATOMIC_RKEY = WR + ibv_send_wr.wr.atomic$offset() + ibv_send_wr.wr.atomic.rkey$offset();
        static final long BIND_MW = ibv_send_wr.bind_mw$offset();
        static final long BIND_MW_MW = BIND_MW + ibv_send_wr.bind_mw.mw$offset();
        static final long BIND_MW_RKEY = BIND_MW + ibv_send_wr.bind_mw.rkey$offset();
        static final long BIND_INFO = BIND_MW + ibv_send_wr.bind_mw.bind_info$offset();
        static final long BIND_INFO_MR = BIND_INFO + ibv_mw_bind_info.mr$offset();
        static final long BIND_INFO_ADDR = BIND_INFO + ibv_mw_bind_info.addr$offset();
        static final long BIND_INFO_LENGTH = BIND_INFO + ibv_mw_bind_info.length$offset();
        static final long BIND_INFO_ACCESS = BIND_INFO + ibv_mw_bind_info.mw_access_flags$offset();
    }

    private final SendWorkRequest flyweight;

    /**
     * @param capacity work requests in the batch (at most the queue pair's send queue size is useful)
     * @param maxSge   SGEs per work request (at most the queue pair's {@code maxSendSge})
     */
    public SendWorkRequests(int capacity, int maxSge) {
        super(capacity, maxSge, Offsets.WR_SIZE, Offsets.NEXT, Offsets.SG_LIST);
        this.flyweight = new SendWorkRequest(this);
    }

    /**
     * The flyweight positioned at entry {@code index} (always the same object).
     *
     * @throws IndexOutOfBoundsException outside 0 to capacity - 1
     */
    public SendWorkRequest get(int index) {
        checkIndex(index);
        return flyweight.at(index);
    }
}
