package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_mr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.MemorySegment;

/**
 * Memory registered with a device ({@code struct ibv_mr}, {@link ProtectionDomain#register}): the
 * local key that SGEs name it by, and the remote key (with its address) a peer needs to RDMA into
 * or out of it.
 *
 * <p>Most regions are host memory the JVM can reach ({@link ProtectionDomain#register(MemorySegment, int)}).
 * Memory it cannot reach, GPU memory given by a dma-buf ({@link ProtectionDomain#registerDmaBuf}) or by
 * address ({@link ProtectionDomain#registerAddress}), is named by {@link #address()} and {@link #length()}
 * only: its {@link #memory()} is {@link MemorySegment#NULL}.
 *
 * <p>Does not own the memory: close the region, then the memory's arena. Depends on its
 * {@link ProtectionDomain}. Immutable after creation, so its getters are thread-safe.
 */
public final class MemoryRegion extends VerbsResource {
    private final ProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment memory;
    private final long length;
    private final int access;
    private final int lkey;
    private final int rkey;
    private final long address;

    /**
     * @param memory the registered memory, or {@link MemorySegment#NULL} for memory the JVM cannot reach
     * @param length the registered length in bytes
     */
    MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment memory, long length, int access) {
        super(ResourceKind.MEMORY_REGION, pd);
        this.pd = pd;
        this.mr = mr;
        this.memory = memory;
        this.length = length;
        this.access = access;
        this.lkey = ibv_mr.lkey(mr);
        this.rkey = ibv_mr.rkey(mr);
        this.address = ibv_mr.addr(mr).address();
    }

    /** The domain it is registered in. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The registered memory; {@link MemorySegment#NULL} for memory the JVM cannot reach (GPU memory). */
    public MemorySegment memory() {
        return memory;
    }

    /** The native {@code struct ibv_mr *}. */
    public MemorySegment segment() {
        return mr;
    }

    /** The key local SGEs name this memory with. */
    public int lkey() {
        return lkey;
    }

    /** The key a peer names this memory with in RDMA READ/WRITE/atomics. */
    public int rkey() {
        return rkey;
    }

    /** The start address (what the peer puts in {@code remote_addr}, plus an offset). */
    public long address() {
        return address;
    }

    /** The registered length in bytes. */
    public long length() {
        return length;
    }

    /** The {@link Access} bits it was registered with. */
    public int access() {
        return access;
    }

    /** The address of {@code offset} bytes into the region, checking that {@code length} bytes fit. */
    public long address(long offset, long length) {
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + length + ") is outside the region of "
                    + this.length + " bytes");
        }
        return address + offset;
    }

    @Override
    void destroy() {
        VerbsNative.check("ibv_dereg_mr", ibverbs_h.ibv_dereg_mr(mr));
    }

    @Override
    public String toString() {
        return "MemoryRegion[" + length + " bytes at 0x" + Long.toHexString(address) + ", lkey 0x"
                + Integer.toHexString(lkey) + ", rkey 0x" + Integer.toHexString(rkey) + "]";
    }
}
