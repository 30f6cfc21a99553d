package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.rdmarpc.ibverbs.verbs.SendWorkRequests.Offsets;

/**
 * The flyweight over one entry of a {@link SendWorkRequests} batch ({@code struct ibv_send_wr} and
 * its SGEs), returned positioned by {@link SendWorkRequests#get(int)}. Setters write native memory
 * directly, return {@code this}, and allocate nothing. Entries keep their contents between posts:
 * {@link #clear()} an entry before refilling it differently.
 *
 * <p>Immediate data is given in host order; it is byte-swapped to the wire's big-endian here and
 * back in {@link WorkCompletions#immData(int)}, so both sides see the same number. An rkey to
 * invalidate ({@link #invalidate(int)}) shares those four bytes, but is host order in
 * {@code ibv_send_wr} too, so it is written as given.
 */
public final class SendWorkRequest {
    /** {@code IBV_SEND_FENCE}: wait for earlier RDMA READs/atomics before this one. */
    public static final int FENCE = 1;
    /** {@code IBV_SEND_SIGNALED}: generate a completion even when the QP does not signal all. */
    public static final int SIGNALED = 1 << 1;
    /** {@code IBV_SEND_SOLICITED}: the receiver's solicited-only notification fires for it. */
    public static final int SOLICITED = 1 << 2;
    /** {@code IBV_SEND_INLINE}: copy the data into the work request at post time (lkey ignored). */
    public static final int INLINE = 1 << 3;

    private final SendWorkRequests batch;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final int maxSge;
    private long wr;
    private long sge;

    SendWorkRequest(SendWorkRequests batch) {
        this.batch = batch;
        this.wrs = batch.segment();
        this.sges = batch.sgeSegment();
        this.maxSge = batch.maxSge();
    }

    SendWorkRequest at(int index) {
        this.wr = index * Offsets.WR_SIZE;
        this.sge = (long) index * maxSge * ScatterGatherEntry.SIZE;
        return this;
    }

    /** The index this flyweight is positioned at. */
    public int index() {
        return (int) (wr / Offsets.WR_SIZE);
    }

    /**
     * Zeroes the entry (opcode RDMA_WRITE, no SGE, no flags, no immediate or key to invalidate, no
     * memory window binding), keeping its link to its SGEs.
     */
    public SendWorkRequest clear() {
        long sgList = wrs.get(ValueLayout.JAVA_LONG, wr + Offsets.SG_LIST);
        for (long off = 0; off < Offsets.WR_SIZE; off += 8) { // sizeof(struct ibv_send_wr) is a multiple of 8
            wrs.set(ValueLayout.JAVA_LONG, wr + off, 0L);
        }
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.SG_LIST, sgList);
        return this;
    }

    /** The id the completion reports ({@link WorkCompletions#wrId(int)}). */
    public SendWorkRequest wrId(long wrId) {
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.WR_ID, wrId);
        return this;
    }

    /** The id set. */
    public long wrId() {
        return wrs.get(ValueLayout.JAVA_LONG, wr + Offsets.WR_ID);
    }

    /** The operation. */
    public SendWorkRequest opcode(SendOpcode opcode) {
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.OPCODE, opcode.value());
        return this;
    }

    /** The operation set. */
    public SendOpcode opcode() {
        return SendOpcode.of(wrs.get(ValueLayout.JAVA_INT, wr + Offsets.OPCODE));
    }

    /** All send flags at once ({@link #SIGNALED} | {@link #INLINE} ...). */
    public SendWorkRequest flags(int flags) {
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.SEND_FLAGS, flags);
        return this;
    }

    /** The send flags set. */
    public int flags() {
        return wrs.get(ValueLayout.JAVA_INT, wr + Offsets.SEND_FLAGS);
    }

    private SendWorkRequest flag(int flag, boolean on) {
        int f = flags();
        return flags(on ? f | flag : f & ~flag);
    }

    /** Whether this work request generates a completion (always, on a QP created with signalAll). */
    public SendWorkRequest signaled(boolean on) {
        return flag(SIGNALED, on);
    }

    /** Whether the data is copied inline at post time (at most the QP's {@code maxInlineData} bytes). */
    public SendWorkRequest inline(boolean on) {
        return flag(INLINE, on);
    }

    /** Whether the remote receive completion is solicited (wakes solicited-only notification). */
    public SendWorkRequest solicited(boolean on) {
        return flag(SOLICITED, on);
    }

    /** Whether to fence this behind earlier RDMA READs and atomics. */
    public SendWorkRequest fence(boolean on) {
        return flag(FENCE, on);
    }

    /** The 32-bit immediate of SEND_WITH_IMM / RDMA_WRITE_WITH_IMM, in host order. */
    public SendWorkRequest immData(int imm) {
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.IMM_DATA, Integer.reverseBytes(imm));
        return this;
    }

    /**
     * The key that LOCAL_INV invalidates or SEND_WITH_INV asks the receiver to invalidate
     * ({@code invalidate_rkey}). It is a union with the immediate data ({@link #immData(int)}), but
     * unlike the immediate it is host order in {@code ibv_send_wr}: written as given, not swapped.
     */
    public SendWorkRequest invalidate(int rkey) {
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.INVALIDATE_RKEY, rkey);
        return this;
    }

    /** The remote address and key of RDMA WRITE/READ. */
    public SendWorkRequest remote(long remoteAddress, int rkey) {
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.RDMA_REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.RDMA_RKEY, rkey);
        return this;
    }

    /** The remote operand of an atomic (8-byte aligned) and its values. */
    public SendWorkRequest atomic(long remoteAddress, int rkey, long compareAdd, long swap) {
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.ATOMIC_REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.ATOMIC_RKEY, rkey);
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.ATOMIC_SWAP, swap);
        return this;
    }

    /**
     * Sets SGE {@code j}: {@code length} bytes at {@code address}, in memory registered with {@code lkey}.
     * Does not change the SGE count ({@link #sgeCount(int)}).
     */
    public SendWorkRequest sge(int j, long address, int length, int lkey) {
        ScatterGatherEntry.write(sges, sgeAt(j), address, length, lkey);
        return this;
    }

    /** The address SGE {@code j} holds. */
    public long sgeAddress(int j) {
        return ScatterGatherEntry.address(sges, sgeAt(j));
    }

    /** The length SGE {@code j} holds. */
    public int sgeLength(int j) {
        return ScatterGatherEntry.length(sges, sgeAt(j));
    }

    /** The local key SGE {@code j} holds. */
    public int sgeLkey(int j) {
        return ScatterGatherEntry.lkey(sges, sgeAt(j));
    }

    private long sgeAt(int j) {
        if (j < 0 || j >= maxSge) {
            throw new IndexOutOfBoundsException("SGE " + j + " of " + maxSge);
        }
        return sge + j * ScatterGatherEntry.SIZE;
    }

    /** Sets SGE {@code j} to {@code length} bytes at {@code offset} in {@code mr} (bounds checked). */
    public SendWorkRequest sge(int j, MemoryRegion mr, long offset, int length) {
        return sge(j, mr.address(offset, length), length, mr.lkey());
    }

    /**
     * Sets SGE {@code j} to all of {@code data}, with no key: only for {@link #inline(boolean) inline}
     * sends, where the provider copies the bytes at post time and ignores the lkey.
     */
    public SendWorkRequest inlineSge(int j, MemorySegment data) {
        return sge(j, data.address(), (int) data.byteSize(), 0);
    }

    /** How many SGEs (from 0) the work request uses. */
    public SendWorkRequest sgeCount(int count) {
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

    private SendWorkRequest one(SendOpcode op, MemoryRegion mr, long offset, int length) {
        opcode(op);
        sge(0, mr, offset, length);
        return sgeCount(1);
    }

    /** SEND of {@code length} bytes at {@code offset} in {@code mr}: opcode, SGE 0, SGE count 1. */
    public SendWorkRequest send(MemoryRegion mr, long offset, int length) {
        return one(SendOpcode.SEND, mr, offset, length);
    }

    /** SEND_WITH_IMM of one buffer with the immediate {@code imm} (host order). */
    public SendWorkRequest sendWithImm(MemoryRegion mr, long offset, int length, int imm) {
        return one(SendOpcode.SEND_WITH_IMM, mr, offset, length).immData(imm);
    }

    /** RDMA_WRITE of one local buffer to {@code remoteAddress} under {@code rkey}. */
    public SendWorkRequest write(MemoryRegion mr, long offset, int length, long remoteAddress, int rkey) {
        return one(SendOpcode.RDMA_WRITE, mr, offset, length).remote(remoteAddress, rkey);
    }

    /** RDMA_WRITE_WITH_IMM: write, and consume a remote receive that reports {@code imm}. */
    public SendWorkRequest writeWithImm(MemoryRegion mr, long offset, int length, long remoteAddress, int rkey,
                                        int imm) {
        return one(SendOpcode.RDMA_WRITE_WITH_IMM, mr, offset, length).remote(remoteAddress, rkey).immData(imm);
    }

    /** RDMA_READ of {@code length} remote bytes at {@code remoteAddress} into the local buffer. */
    public SendWorkRequest read(MemoryRegion mr, long offset, int length, long remoteAddress, int rkey) {
        return one(SendOpcode.RDMA_READ, mr, offset, length).remote(remoteAddress, rkey);
    }

    /**
     * SEND_WITH_INV of one buffer: a SEND whose receiver, once the receive completes, can no longer be
     * reached through {@code rkey} (a memory window or region key of the receiver's); its receive
     * completion reports the key ({@link WorkCompletions#invalidatedRkey(int)}).
     */
    public SendWorkRequest sendWithInvalidate(MemoryRegion mr, long offset, int length, int rkey) {
        return one(SendOpcode.SEND_WITH_INV, mr, offset, length).invalidate(rkey);
    }

    /**
     * LOCAL_INV of {@code rkey}: once it completes, the key (of a memory window bound on this queue
     * pair's domain, {@link MemoryWindow}) reaches nothing, and the window may be bound again. No SGE.
     */
    public SendWorkRequest localInvalidate(int rkey) {
        opcode(SendOpcode.LOCAL_INV);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.NUM_SGE, 0);
        return invalidate(rkey);
    }

    /**
     * BIND_MW: binds the type-2 window {@code mw} to {@code length} bytes at {@code address} in
     * {@code mr}, under the key {@code newRkey}, with the window's own access. Posted on an RC queue pair
     * of the window's domain; the window must be free (never bound, or invalidated since), the region
     * registered with {@link Access#MW_BIND}. Signal it: the key is valid once it has completed
     * successfully, and then {@link MemoryWindow#bound(int) mw.bound(newRkey)} records it.
     *
     * <p>Sets the opcode, the {@code bind_mw} fields, SGE count 0 and no immediate data (a bind
     * carries none; Soft-RoCE refuses a bind whose {@code imm_data} is set).
     *
     * @param newRkey       the key of this binding: {@link MemoryWindow#nextRkey(int)
     *                      MemoryWindow.nextRkey}{@code (mw.rkey())}, low 8 bits different from the last
     * @param address       the first byte of the window (an address inside {@code mr})
     * @param length        bytes
     * @param mwAccessFlags {@link Access} bits the peer gets: {@link Access#REMOTE_READ},
     *                      {@link Access#REMOTE_WRITE}, {@link Access#REMOTE_ATOMIC} (writes need a
     *                      region with {@link Access#LOCAL_WRITE})
     * @throws IllegalStateException     when the window or the region is closed
     * @throws IllegalArgumentException  when they belong to different protection domains
     * @throws IndexOutOfBoundsException when the range is not inside the region
     */
    public SendWorkRequest bindMemoryWindow(MemoryWindow mw, int newRkey, MemoryRegion mr, long address, long length,
                                            int mwAccessFlags) {
        mw.ensureOpen();
        mr.ensureOpen();
        if (mw.protectionDomain() != mr.protectionDomain()) {
            throw new IllegalArgumentException(mw + " and " + mr + " are in different protection domains");
        }
        long offset = address - mr.address();
        if (length < 0 || offset < 0 || offset > mr.length() - length) {
            throw new IndexOutOfBoundsException("[0x" + Long.toHexString(address) + ", +" + length
                    + ") is outside " + mr);
        }
        return bindMemoryWindow(mw.segment(), newRkey, mr.segment(), address, length, mwAccessFlags);
    }

    /**
     * {@link #bindMemoryWindow(MemoryWindow, int, MemoryRegion, long, long, int)} by native pointers,
     * for a transport that keeps them instead of the objects: nothing is checked but that neither
     * pointer is NULL (providers read both when the request is posted).
     *
     * @param mwPointer the {@code struct ibv_mw *} ({@link MemoryWindow#segment()})
     * @param mrPointer the {@code struct ibv_mr *} ({@link MemoryRegion#segment()})
     * @param access    the window's {@link Access} bits
     * @throws IllegalArgumentException for a NULL pointer
     */
    public SendWorkRequest bindMemoryWindow(MemorySegment mwPointer, int newRkey, MemorySegment mrPointer,
                                            long address, long length, int access) {
        if (mwPointer.address() == 0 || mrPointer.address() == 0) {
            throw new IllegalArgumentException("bind_mw needs a window and a region, not NULL");
        }
        opcode(SendOpcode.BIND_MW);
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.BIND_MW_MW, mwPointer.address());
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.BIND_MW_RKEY, newRkey);
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.BIND_INFO_MR, mrPointer.address());
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.BIND_INFO_ADDR, address);
        wrs.set(ValueLayout.JAVA_LONG, wr + Offsets.BIND_INFO_LENGTH, length);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.BIND_INFO_ACCESS, access);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.NUM_SGE, 0);
        wrs.set(ValueLayout.JAVA_INT, wr + Offsets.IMM_DATA, 0);
        return this;
    }

    /** The batch this flyweight belongs to. */
    public SendWorkRequests batch() {
        return batch;
    }
}
