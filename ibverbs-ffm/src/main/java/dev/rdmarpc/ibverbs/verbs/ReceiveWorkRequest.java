package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests.Offsets;

/**
 * The flyweight over one entry of a {@link ReceiveWorkRequests} batch ({@code struct ibv_recv_wr}
 * and its SGEs): where an incoming SEND lands. Setters write native memory, return {@code this} and
 * allocate nothing.
 */
public final class ReceiveWorkRequest {
    private final ReceiveWorkRequests batch;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final int maxSge;
    private long wr;
    private long sge;

    ReceiveWorkRequest(ReceiveWorkRequests batch) {
        this.batch = batch;
        this.wrs = batch.segment();
        this.sges = batch.sgeSegment();
        this.maxSge = batch.maxSge();
    }

    ReceiveWorkRequest at(int index) {
        this.wr = index * Offsets.WR_SIZE;
        this.sge = (long) index * maxSge * ScatterGatherEntry.SIZE;
        return this;
    }

    /** The index this flyweight is positioned at. */
    public int index() {
        return (int) (wr / Offsets.WR_SIZE);
    }

    /** The id the completion reports. */
    public ReceiveWorkRequest wrId(long wrId) {
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.WR_ID, wrId);
        return this;
    }

    /** The id set. */
    public long wrId() {
        return wrs.get(ValueLayout.JAVA_LONG, wr + Offsets.WR_ID);
    }

    /** Sets SGE {@code j} (the SGE count is {@link #sgeCount(int)}'s). */
    public ReceiveWorkRequest sge(int j, long address, int length, int lkey) {
        ScatterGatherEntry.write(sges, sgeAt(j), address, length, lkey);
        return this;
    }

    private long sgeAt(int j) {
        if (j < 0 || j >= maxSge) {
            throw new IndexOutOfBoundsException("SGE " + j + " of " + maxSge);
        }
        return sge + j * ScatterGatherEntry.SIZE;
    }

    /** Sets SGE {@code j} to {@code length} bytes at {@code offset} in {@code mr} (bounds checked). */
    public ReceiveWorkRequest sge(int j, MemoryRegion mr, long offset, int length) {
        return sge(j, mr.address(offset, length), length, mr.lkey());
    }

    /** How many SGEs (from 0) the work request uses; 0 is allowed (a receive for WRITE_WITH_IMM). */
    public ReceiveWorkRequest sgeCount(int count) {
        if (count < 0 || count > maxSge) {
            throw new IndexOutOfBoundsException("SGE count " + count + " of " + maxSge);
        }
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.NUM_SGE, count);
        return this;
    }

    /** The SGE count set. */
    public int sgeCount() {
        return wrs.get(ValueLayout.JAVA_INT, wr + Offsets.NUM_SGE);
    }

    /** One buffer: SGE 0 is {@code length} bytes at {@code offset} in {@code mr}, SGE count 1. */
    public ReceiveWorkRequest buffer(MemoryRegion mr, long offset, int length) {
        sge(0, mr, offset, length);
        return sgeCount(1);
    }

    /** The batch this flyweight belongs to. */
    public ReceiveWorkRequests batch() {
        return batch;
    }
}
