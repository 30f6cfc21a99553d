package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_wr_opcode}: the operation a send work request performs. */
public enum SendOpcode {
    /** Write local data to remote memory; the remote side sees nothing. */
    RDMA_WRITE(0),
    /** RDMA_WRITE, then consume a receive on the remote side with the 32-bit immediate. */
    RDMA_WRITE_WITH_IMM(1),
    /** Deliver local data into the remote side's next receive. */
    SEND(2),
    /** SEND with a 32-bit immediate in the receiver's completion. */
    SEND_WITH_IMM(3),
    /** Read remote memory into local memory. */
    RDMA_READ(4),
    /** 64-bit compare-and-swap on remote memory; the old value lands in the local SGE. */
    ATOMIC_CMP_AND_SWP(5),
    /** 64-bit fetch-and-add on remote memory; the old value lands in the local SGE. */
    ATOMIC_FETCH_AND_ADD(6),
    /** Invalidate a key locally (a memory window's: {@link SendWorkRequest#localInvalidate(int)}); no data. */
    LOCAL_INV(7),
    /** Bind a type-2 memory window to a range of a region ({@link SendWorkRequest#bindMemoryWindow}); no data. */
    BIND_MW(8),
    /** SEND that also invalidates a key of the receiver's ({@link SendWorkRequest#sendWithInvalidate}). */
    SEND_WITH_INV(9);

    private static final SendOpcode[] VALUES = values();
    private final int value;

    SendOpcode(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value, or {@code null} for one this layer does not know. */
    public static SendOpcode of(int value) {
        return value >= 0 && value < VALUES.length ? VALUES[value] : null;
    }
}
