package dev.rdmarpc.ibverbs.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * {@code enum ibv_access_flags}: what a memory region (or a queue pair, for remote access) allows.
 * Either as a set ({@link #flags(Set)}) or as the C bits ({@link #bit()}, the {@code int}
 * constants); every method taking access takes both.
 *
 * <p>Remote write and remote atomic need {@link #LOCAL_WRITE} too (libibverbs refuses otherwise).
 */
public enum Access {
    /** The device may write the memory (receives, RDMA READ results). */
    LOCAL_WRITE(1),
    /** The peer may RDMA WRITE into the memory (needs LOCAL_WRITE). */
    REMOTE_WRITE(1 << 1),
    /** The peer may RDMA READ the memory. */
    REMOTE_READ(1 << 2),
    /** The peer may do atomics on the memory (needs LOCAL_WRITE). */
    REMOTE_ATOMIC(1 << 3),
    /**
     * A memory window may be bound to this region ({@link MemoryWindow}, registration only); the
     * region needs no remote bits for the window to grant remote access.
     */
    MW_BIND(1 << 4),
    /**
     * For a memory window's binding ({@code mw_access_flags}): the peer addresses the window from 0
     * instead of by virtual address (device support needed).
     */
    ZERO_BASED(1 << 5),
    /** On-demand paging: no pinning at registration; pages fault in on access (device support needed). */
    ON_DEMAND(1 << 6),
    /** The memory is backed by huge pages (a hint some providers use). */
    HUGETLB(1 << 7),
    /** Relaxed PCIe ordering where the device supports it (an optional flag: ignored elsewhere). */
    RELAXED_ORDERING(1 << 20);

    /** {@link #LOCAL_WRITE}, the minimum for receive buffers. */
    public static final int LOCAL = 1;
    /** Local write, remote read and remote write: a buffer the peer reads and writes. */
    public static final int LOCAL_REMOTE_READ_WRITE = 1 | (1 << 1) | (1 << 2);

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    /** The C bit. */
    public int bit() {
        return bit;
    }

    /** The C bits of a set. */
    public static int flags(Set<Access> access) {
        int flags = 0;
        for (Access a : access) {
            flags |= a.bit;
        }
        return flags;
    }

    /**
     * The set of C bits.
     *
     * @throws IllegalArgumentException for bits that are no access flag
     */
    public static Set<Access> of(int flags) {
        EnumSet<Access> set = EnumSet.noneOf(Access.class);
        int rest = flags;
        for (Access a : values()) {
            if ((flags & a.bit) != 0) {
                set.add(a);
                rest &= ~a.bit;
            }
        }
        if (rest != 0) {
            throw new IllegalArgumentException("unknown access bits 0x" + Integer.toHexString(rest));
        }
        return set;
    }
}
