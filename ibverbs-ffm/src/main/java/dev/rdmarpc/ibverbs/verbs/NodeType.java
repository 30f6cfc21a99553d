package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_node_type}: what kind of RDMA device this is. */
public enum NodeType {
    /** A value this layer does not know ({@code IBV_NODE_UNKNOWN} is -1). */
    UNKNOWN(-1),
    /** An InfiniBand channel adapter or RoCE NIC (rxe, mlx5). */
    CA(1),
    SWITCH(2),
    ROUTER(3),
    /** An iWARP NIC. */
    RNIC(4),
    USNIC(5),
    USNIC_UDP(6),
    UNSPECIFIED(7);

    private final int value;

    NodeType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value; {@link #UNKNOWN} for values this layer does not know. */
    public static NodeType of(int value) {
        for (NodeType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
