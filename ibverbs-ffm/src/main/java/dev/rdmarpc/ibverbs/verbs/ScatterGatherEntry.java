package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_sge;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct ibv_sge}, the scatter/gather entry both work-request flyweights ({@link SendWorkRequest},
 * {@link ReceiveWorkRequest}) write: its size and field offsets, read once from the generated layout,
 * and the accesses at a byte offset of an SGE array. Static and allocation-free.
 */
final class ScatterGatherEntry {
    /** {@code sizeof(struct ibv_sge)}. */
    static final long SIZE = ibv_sge.sizeof();
    private static final long ADDR = ibv_sge.addr$offset();
    private static final long LENGTH = ibv_sge.length$offset();
    private static final long LKEY = ibv_sge.lkey$offset();

    private ScatterGatherEntry() {
    }

    /** Writes the entry at byte {@code at} of {@code sges}: {@code length} bytes at {@code address} under {@code lkey}. */
    static void write(MemorySegment sges, long at, long address, int length, int lkey) {
        sges.set(ValueLayout.JAVA_LONG, at + ADDR, address);
        sges.set(ValueLayout.JAVA_INT, at + LENGTH, length);
        sges.set(ValueLayout.JAVA_INT, at + LKEY, lkey);
    }

    static long address(MemorySegment sges, long at) {
        return sges.get(ValueLayout.JAVA_LONG, at + ADDR);
    }

    static int length(MemorySegment sges, long at) {
        return sges.get(ValueLayout.JAVA_INT, at + LENGTH);
    }

    static int lkey(MemorySegment sges, long at) {
        return sges.get(ValueLayout.JAVA_INT, at + LKEY);
    }
}
