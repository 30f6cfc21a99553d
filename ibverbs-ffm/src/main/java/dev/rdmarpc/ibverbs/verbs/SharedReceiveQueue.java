package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_srq;
import dev.rdmarpc.ibverbs.raw.ibv_srq_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A shared receive queue ({@code struct ibv_srq}): one pool of receive buffers for many queue pairs
 * ({@link QueuePairInit#sharedReceiveQueue}). Posting allocates nothing and, like
 * {@link QueuePair#postReceive}, returns 0 or the provider's errno value.
 *
 * <p>Depends on its {@link ProtectionDomain}; refuses to close while a queue pair uses it. Posting
 * is for one thread per {@link ReceiveWorkRequests} batch; the rest is thread-safe.
 */
public final class SharedReceiveQueue extends VerbsResource {
    private final ProtectionDomain pd;
    private final Context context;
    private final MemorySegment srq;
    private final long address;
    private final int maxWr;
    private final int maxSge;
    private final MemorySegment postFn;

    SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq, int maxWr, int maxSge) {
        super(ResourceKind.SHARED_RECEIVE_QUEUE, pd);
        this.pd = pd;
        this.context = pd.context();
        this.srq = srq.reinterpret(ibv_srq.sizeof());
        this.address = srq.address();
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.postFn = DataPath.op(ibv_srq.context(this.srq), DataPath.OPS_POST_SRQ_RECV, "post_srq_recv");
        context.registerElement(this.srq, this);
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The native {@code struct ibv_srq *}. */
    public MemorySegment segment() {
        return srq;
    }

    /** Receive work requests it holds (as granted). */
    public int maxWr() {
        return maxWr;
    }

    /** Scatter entries per work request (as granted). */
    public int maxSge() {
        return maxSge;
    }

    /**
     * Posts receive work requests {@code first} to {@code first + count - 1} of {@code wrs}
     * ({@code ibv_post_srq_recv}); allocates nothing.
     *
     * @return 0, or the provider's errno value with {@code wrs.failedIndex()} set
     */
    public int postReceive(ReceiveWorkRequests wrs, int first, int count) {
        ensureOpen();
        long head = wrs.link(first, count);
        return DataPath.post(postFn, address, head, wrs.badWrAddress());
    }

    /**
     * Arms the limit event: when fewer than {@code limit} receives remain, an
     * {@link AsyncEventType#SRQ_LIMIT_REACHED} event fires once ({@code ibv_modify_srq}).
     */
    public void armLimit(int limit) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_srq_attr.allocate(arena);
            ibv_srq_attr.srq_limit(attr, limit);
            VerbsNative.check("ibv_modify_srq", ibverbs_h.ibv_modify_srq(srq, attr, ibverbs_h.IBV_SRQ_LIMIT()));
        }
    }

    @Override
    void destroy() {
        VerbsNative.check("ibv_destroy_srq", ibverbs_h.ibv_destroy_srq(srq));
        context.unregisterElement(srq);
    }

    @Override
    public String toString() {
        return "SharedReceiveQueue[" + context.name() + ", " + maxWr + "x" + maxSge + "]";
    }
}
