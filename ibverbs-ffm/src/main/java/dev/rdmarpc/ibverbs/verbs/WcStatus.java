package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

/**
 * {@code enum ibv_wc_status}: how a work request completed. Anything but {@link #SUCCESS} moves the
 * queue pair to the error state, and every work request still queued on it then completes with
 * {@link #WR_FLUSH_ERR}. {@link #text()} is libibverbs' own description ({@code ibv_wc_status_str}).
 */
public enum WcStatus {
    SUCCESS, LOC_LEN_ERR, LOC_QP_OP_ERR, LOC_EEC_OP_ERR, LOC_PROT_ERR, WR_FLUSH_ERR, MW_BIND_ERR, BAD_RESP_ERR,
    LOC_ACCESS_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR, REM_OP_ERR, RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, LOC_RDD_VIOL_ERR,
    REM_INV_RD_REQ_ERR, REM_ABORT_ERR, INV_EECN_ERR, INV_EEC_STATE_ERR, FATAL_ERR, RESP_TIMEOUT_ERR, GENERAL_ERR,
    TM_ERR, TM_RNDV_INCOMPLETE,
    /** A status value this layer does not know (a newer rdma-core); {@link WorkCompletions#statusCode} has it. */
    UNKNOWN;

    private static final WcStatus[] VALUES = values();
    private volatile String text;

    /** The C value ({@code IBV_WC_SUCCESS} is 0), or -1 for {@link #UNKNOWN}. */
    public int value() {
        return this == UNKNOWN ? -1 : ordinal();
    }

    /** The constant for a C value, without allocating; {@link #UNKNOWN} beyond the known ones. */
    public static WcStatus of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? VALUES[value] : UNKNOWN;
    }

    /** libibverbs' text for this status ({@code ibv_wc_status_str}), e.g. "remote access error". */
    public String text() {
        String t = text;
        if (t == null) {
            t = text(value());
            text = t;
        }
        return t;
    }

    /** libibverbs' text for any status value, known to this enum or not. */
    public static String text(int value) {
        Ibverbs.ensureAvailability();
        return ibverbs_h.ibv_wc_status_str(value).getString(0);
    }
}
