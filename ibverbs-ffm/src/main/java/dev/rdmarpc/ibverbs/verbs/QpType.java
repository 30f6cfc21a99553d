package dev.rdmarpc.ibverbs.verbs;

/** The queue pair transports this layer creates ({@code enum ibv_qp_type}). */
public enum QpType {
    /** Reliable connected: every operation, acknowledged, in order. */
    RC(2),
    /** Unreliable connected: SEND and RDMA WRITE, no acknowledgements. */
    UC(3);

    private final int value;

    QpType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value, or {@code null} for a type this layer does not create. */
    public static QpType of(int value) {
        for (QpType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return null;
    }
}
