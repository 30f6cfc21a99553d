package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_gid_type}: the encapsulation a GID table entry stands for. */
public enum GidType {
    /** InfiniBand (also reported for RoCE v1 by older kernels). */
    IB,
    /** RoCE v1: GRH over Ethernet (ethertype 0x8915); not routable. */
    ROCE_V1,
    /** RoCE v2: over UDP/IP (port 4791); routable, the usual choice. */
    ROCE_V2,
    /** A value this layer does not know. */
    UNKNOWN;

    /** The constant for a C value ({@code IBV_GID_TYPE_IB} is 0). */
    public static GidType of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
}
