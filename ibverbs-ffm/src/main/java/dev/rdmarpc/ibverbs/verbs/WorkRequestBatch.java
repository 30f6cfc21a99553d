package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The native memory of a reusable batch of work requests, shared by {@link SendWorkRequests} and
 * {@link ReceiveWorkRequests}, which differ only in the struct ({@code ibv_send_wr} or
 * {@code ibv_recv_wr}) and its flyweight: {@code capacity} structs with {@code maxSge}
 * {@code struct ibv_sge} each, every entry's {@code sg_list} pointing at its own SGEs (set once),
 * and the {@code bad_wr} out-pointer a failed post fills.
 *
 * <p>Owns its native memory (shared arena: any thread may post it); {@link #close()} frees it once.
 * Not thread-safe: one thread fills and posts a batch at a time.
 */
abstract sealed class WorkRequestBatch implements AutoCloseable permits SendWorkRequests, ReceiveWorkRequests {
    private final long wrSize;
    private final long nextOffset;
    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final long badWrAddress;
    private final int capacity;
    private final int maxSge;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param capacity      work requests in the batch
     * @param maxSge        SGEs per work request
     * @param wrSize        {@code sizeof} the work-request struct
     * @param nextOffset    offset of its {@code next} pointer
     * @param sgListOffset  offset of its {@code sg_list} pointer
     */
    WorkRequestBatch(int capacity, int maxSge, long wrSize, long nextOffset, long sgListOffset) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be >= 1: " + capacity + ", " + maxSge);
        }
        Ibverbs.ensureAvailability();
        this.wrSize = wrSize;
        this.nextOffset = nextOffset;
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(wrSize * capacity, 8);
        this.sges = arena.allocate(ScatterGatherEntry.SIZE * capacity * maxSge, 8);
        this.badWr = arena.allocate(ValueLayout.ADDRESS);
        this.badWrAddress = badWr.address();
        for (int i = 0; i < capacity; i++) {
            wrs.set(ValueLayout.ADDRESS, i * wrSize + sgListOffset, sges.asSlice(i * maxSge * ScatterGatherEntry.SIZE));
        }
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

    /** The native array of work-request structs, {@code capacity} of them. */
    public MemorySegment segment() {
        return wrs;
    }

    /** The native {@code struct ibv_sge[capacity * maxSge]}; entry {@code i}'s SGEs start at {@code i * maxSge}. */
    public MemorySegment sgeSegment() {
        return sges;
    }

    /** Checks an index for {@code get}. */
    final void checkIndex(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException("work request " + index + " of " + capacity);
        }
    }

    /**
     * Chains entries {@code first} to {@code first + count - 1} through their {@code next} pointers
     * (the last one's is NULL), clears the failure pointer, and returns the first one's address:
     * what {@code ibv_post_send} or {@code ibv_post_recv} takes.
     */
    final long link(int first, int count) {
        if (count < 1 || first < 0 || first > capacity - count) {
            throw new IndexOutOfBoundsException("work requests [" + first + ", +" + count + ") of " + capacity);
        }
        long base = first * wrSize;
        long last = (first + count - 1) * wrSize;
        long address = wrs.address();
        for (long off = base; off < last; off += wrSize) {
            wrs.set(ValueLayout.JAVA_LONG, off + nextOffset, address + off + wrSize);
        }
        wrs.set(ValueLayout.JAVA_LONG, last + nextOffset, 0L);
        badWr.set(ValueLayout.JAVA_LONG, 0, 0L);
        return address + base;
    }

    /** The address of the {@code bad_wr} out-pointer the provider sets on failure. */
    final long badWrAddress() {
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
        return (int) (off / wrSize);
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
