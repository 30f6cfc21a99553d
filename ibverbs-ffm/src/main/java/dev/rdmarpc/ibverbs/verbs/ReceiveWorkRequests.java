package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibv_recv_wr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A reusable batch of receive work requests in native memory: {@code capacity}
 * {@code struct ibv_recv_wr} with {@code maxSge} {@code struct ibv_sge} each, posted to a
 * {@link QueuePair#postReceive queue pair} or a {@link SharedReceiveQueue#postReceive shared
 * receive queue} without allocating. The receive-side twin of {@link SendWorkRequests}, with the
 * same rules: {@link #get(int)} returns one flyweight, repositioned; one thread at a time; the
 * owner {@link #close() closes} it once.
 */
public final class ReceiveWorkRequests implements AutoCloseable {
    /** Size and field offsets of {@code struct ibv_recv_wr}, read once from the generated layout. */
    static final class Offsets {
        static final long WR_SIZE = ibv_recv_wr.sizeof();
        static final long WR_ID = ibv_recv_wr.wr_id$offset();
        static final long NEXT = ibv_recv_wr.next$offset();
        static final long SG_LIST = ibv_recv_wr.sg_list$offset();
        static final long NUM_SGE = ibv_recv_wr.num_sge$offset();
    }

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final long badWrAddress;
    private final int capacity;
    private final int maxSge;
    private final ReceiveWorkRequest flyweight;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param capacity work requests in the batch
     * @param maxSge   SGEs per work request (at most the queue's {@code maxRecvSge})
     */
    public ReceiveWorkRequests(int capacity, int maxSge) {
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
        this.flyweight = new ReceiveWorkRequest(this);
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

    /** The native {@code struct ibv_recv_wr[capacity]}. */
    public MemorySegment segment() {
        return wrs;
    }

    /** The native {@code struct ibv_sge[capacity * maxSge]}. */
    public MemorySegment sgeSegment() {
        return sges;
    }

    /**
     * The flyweight positioned at entry {@code index} (always the same object).
     *
     * @throws IndexOutOfBoundsException outside 0 to capacity - 1
     */
    public ReceiveWorkRequest get(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException("work request " + index + " of " + capacity);
        }
        return flyweight.at(index);
    }

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

    /** After a failed post: the index of the first work request not posted, or -1. */
    public int failedIndex() {
        long bad = badWr.get(ValueLayout.JAVA_LONG, 0);
        long off = bad - wrs.address();
        if (bad == 0 || off < 0 || off >= wrs.byteSize()) {
            return -1;
        }
        return (int) (off / Offsets.WR_SIZE);
    }

    /** Frees the native memory, once. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
            VerbsResources.onDestroyed(ResourceKind.NATIVE_BUFFER);
        }
    }
}
