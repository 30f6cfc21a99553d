package dev.rdmarpc.ibverbs.verbs;

/**
 * {@code enum ibv_wc_opcode}: what a completion completed. Receive-side opcodes have bit 7
 * ({@link #RECV}'s value) set, see {@link #isReceive()}.
 */
public enum WcOpcode {
    SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5), LOCAL_INV(6), TSO(7),
    ATOMIC_WRITE(9),
    /** A SEND or SEND_WITH_IMM arrived. */
    RECV(128),
    /** An RDMA WRITE_WITH_IMM arrived (it consumed a receive; the data went to the remote address). */
    RECV_RDMA_WITH_IMM(129),
    TM_ADD(130), TM_DEL(131), TM_SYNC(132), TM_RECV(133), TM_NO_TAG(134), DRIVER1(135), DRIVER2(136), DRIVER3(137),
    /** A value this layer does not know. */
    UNKNOWN(-1);

    private static final WcOpcode[] LOW = new WcOpcode[10];
    private static final WcOpcode[] HIGH = new WcOpcode[10];

    static {
        java.util.Arrays.fill(LOW, UNKNOWN);
        java.util.Arrays.fill(HIGH, UNKNOWN);
        for (WcOpcode o : values()) {
            if (o.value >= 0 && o.value < 10) {
                LOW[o.value] = o;
            } else if (o.value >= 128 && o.value < 138) {
                HIGH[o.value - 128] = o;
            }
        }
    }

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** Whether this completes a receive (bit 7 set, as {@code opcode & IBV_WC_RECV} tests in C). */
    public boolean isReceive() {
        return value >= 128;
    }

    /** The constant for a C value, without allocating; {@link #UNKNOWN} for unknown values. */
    public static WcOpcode of(int value) {
        if (value >= 0 && value < 10) {
            return LOW[value];
        }
        if (value >= 128 && value < 138) {
            return HIGH[value - 128];
        }
        return UNKNOWN;
    }
}
