package dev.rdmarpc.ibverbs.verbs;

/** {@code enum ibv_port_state}. Only an {@link #ACTIVE} port carries traffic. */
public enum PortState {
    NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER, UNKNOWN;

    /** The constant for a C value ({@code IBV_PORT_NOP} is 0); {@link #UNKNOWN} beyond the known ones. */
    public static PortState of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }

    /** The C value, or -1 for {@link #UNKNOWN}. */
    public int value() {
        return this == UNKNOWN ? -1 : ordinal();
    }
}
