package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_recv_wr;

/**
 * A reusable batch of receive work requests in native memory: {@code capacity}
 * {@code struct ibv_recv_wr} with {@code maxSge} {@code struct ibv_sge} each, posted to a
 * {@link QueuePair#postReceive queue pair} or a {@link SharedReceiveQueue#postReceive shared
 * receive queue} without allocating. The receive-side twin of {@link SendWorkRequests}, with the
 * same rules: {@link #get(int)} returns one flyweight, repositioned; one thread at a time; the
 * owner {@link #close() closes} it once.
 */
public final class ReceiveWorkRequests extends WorkRequestBatch {
    /** Size and field offsets of {@code struct ibv_recv_wr}, read once from the generated layout. */
    static final class Offsets {
        static final long WR_SIZE = ibv_recv_wr.sizeof();
        static final long WR_ID = ibv_recv_wr.wr_id$offset();
        static final long NEXT = ibv_recv_wr.next$offset();
        static final long SG_LIST = ibv_recv_wr.sg_list$offset();
        static final long NUM_SGE = ibv_recv_wr.num_sge$offset();
    }

    private final ReceiveWorkRequest flyweight;

    /**
     * @param capacity work requests in the batch
     * @param maxSge   SGEs per work request (at most the queue's {@code maxRecvSge})
     */
    public ReceiveWorkRequests(int capacity, int maxSge) {
        super(capacity, maxSge, Offsets.WR_SIZE, Offsets.NEXT, Offsets.SG_LIST);
        this.flyweight = new ReceiveWorkRequest(this);
    }

    /**
     * The flyweight positioned at entry {@code index} (always the same object).
     *
     * @throws IndexOutOfBoundsException outside 0 to capacity - 1
     */
    public ReceiveWorkRequest get(int index) {
        checkIndex(index);
        return flyweight.at(index);
    }
}
