package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibv_mw_bind_info;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

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
public final class SendWorkRequests implements AutoCloseable {
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

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final long badWrAddress;
    private final int capacity;
    private final int maxSge;
    private final SendWorkRequest flyweight;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param capacity work requests in the batch (at most the queue pair's send queue size is useful)
     * @param maxSge   SGEs per work request (at most the queue pair's {@code maxSendSge})
     */
    public SendWorkRequests(int capacity, int maxSge) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be >= 1: " + capacity + ", " + maxSge);
        }
        Ibverbs.ensureAvailability();
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(Offsets.WR_SIZE * capacity, 8);
        this.sges = arena.allocate(ScatterGatherEntry.SIZE * capacity * maxSge, 8);
        this.badWr = arena.allocate(ValueLayout.ADDRESS);
        this.badWrAddress = badWr.address();
        for (int i = 0; i < capacity; i++) {
            wrs.set(ValueLayout.ADDRESS, i * Offsets.WR_SIZE + Offsets.SG_LIST, sges.asSlice(i * maxSge * ScatterGatherEntry.SIZE));
        }
        this.flyweight = new SendWorkRequest(this);
        VerbsResources.onCreated(ResourceKind.NATIVE_BUFFER);
    }

    /** Work requests in the batch. */
    public int capacity() {
        return capacity;
    }

    /** SGEs per work request. */
    public int maxSge() {
        return maxSge;
    }

    /** The native {@code struct ibv_send_wr[capacity]}. */
    public MemorySegment segment() {
        return wrs;
    }

    /** The native {@code struct ibv_sge[capacity * maxSge]}; entry {@code i}'s SGEs start at {@code i * maxSge}. */
    public MemorySegment sgeSegment() {
        return sges;
    }

    /**
     * The flyweight positioned at entry {@code index} (always the same object).
     *
     * @throws IndexOutOfBoundsException outside 0 to capacity - 1
     */
    public SendWorkRequest get(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException("work request " + index + " of " + capacity);
        }
        return flyweight.at(index);
    }

    /**
     * Chains entries {@code first} to {@code first + count - 1} through their {@code next} pointers
     * (the last one's is NULL), clears the failure pointer, and returns the first one's address:
     * what {@code ibv_post_send} takes.
     */
    long link(int first, int count) {
        if (count < 1 || first < 0 || first > capacity - count) {
            throw new IndexOutOfBoundsException("work requests [" + first + ", +" + count + ") of " + capacity);
        }
        long base = first * Offsets.WR_SIZE;
        long last = (first + count - 1) * Offsets.WR_SIZE;
        long address = wrs.address();
        for (long off = base; off < last; off += Offsets.WR_SIZE) {
            wrs.set(ValueLayout.JAVA_LONG, off + Offsets.NEXT, address + off + Offsets.WR_SIZE);
        }
        wrs.set(ValueLayout.JAVA_LONG, last + Offsets.NEXT, 0L);
        badWr.set(ValueLayout.JAVA_LONG, 0, 0L);
        return address + base;
    }

    /** The address of the {@code bad_wr} out-pointer the provider sets on failure. */
    long badWrAddress() {
        return badWrAddress;
    }

    /**
     * After a post that failed: the index of the first work request that was not posted (those
     * before it were), or -1 when the last post succeeded or the failure named no entry.
     */
    public int failedIndex() {
        long bad = badWr.get(ValueLayout.JAVA_LONG, 0);
        long off = bad - wrs.address();
        if (bad == 0 || off < 0 || off >= wrs.byteSize()) {
            return -1;
        }
        return (int) (off / Offsets.WR_SIZE);
    }

    /** Frees the native memory, once. Not while a post of it is running. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
            VerbsResources.onDestroyed(ResourceKind.NATIVE_BUFFER);
        }
    }
}
