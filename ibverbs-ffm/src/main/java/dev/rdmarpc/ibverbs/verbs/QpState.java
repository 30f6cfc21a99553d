package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_qp_state}: RESET -> INIT -> RTR -> RTS; ERR flushes; ERR or any -> RESET. */
public enum QpState {
    RESET, INIT, RTR, RTS, SQD, SQE, ERR, UNKNOWN;

    /** The C value ({@code IBV_QPS_RESET} is 0, {@code IBV_QPS_UNKNOWN} 7). */
    public int value() {
        return ordinal();
    }

    /** The constant for a C value; {@link #UNKNOWN} beyond the known ones. */
    public static QpState of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
}
