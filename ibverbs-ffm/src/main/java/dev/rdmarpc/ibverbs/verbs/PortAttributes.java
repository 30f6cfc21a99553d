package dev.rdmarpc.ibverbs.verbs;

/**
 * The state of one port of a device ({@code struct ibv_port_attr}, {@link Context#queryPort(int)}).
 *
 * @param port           the port number (from 1)
 * @param state          only {@link PortState#ACTIVE} carries traffic
 * @param maxMtu         the largest MTU the port supports
 * @param activeMtu      the MTU in use: the largest path MTU a connection through this port can use
 * @param gidTableLength entries of the GID table (see {@link Context#gidTable(int)})
 * @param portCapFlags   {@code enum ibv_port_cap_flags} bits
 * @param maxMessageSize the largest message, bytes
 * @param lid            the base LID (InfiniBand; 0 on RoCE)
 * @param smLid          the subnet manager's LID
 * @param linkLayer      InfiniBand or Ethernet (RoCE)
 * @param activeWidth    {@code active_width} code
 * @param activeSpeed    {@code active_speed} code
 * @param physicalState  {@code phys_state} code (5 = LinkUp)
 * @param pkeyTableLength entries of the P_Key table
 */
public record PortAttributes(int port, PortState state, Mtu maxMtu, Mtu activeMtu, int gidTableLength,
                             int portCapFlags, long maxMessageSize, int lid, int smLid, LinkLayer linkLayer,
                             int activeWidth, int activeSpeed, int physicalState, int pkeyTableLength) {
    /** Whether the port carries traffic. */
    public boolean isActive() {
        return state == PortState.ACTIVE;
    }

    /** Whether connections through this port need a GRH (global routing): RoCE always does. */
    public boolean isEthernet() {
        return linkLayer == LinkLayer.ETHERNET;
    }

    /**
     * The lanes of the link, decoded from {@link #activeWidth()} ({@code 1, 2, 4, 8, 16} stand for
     * 1X, 4X, 8X, 12X, 2X).
     *
     * @return 1, 2, 4, 8 or 12; 0 for a code this layer does not know
     */
    public int activeLanes() {
        return switch (activeWidth) {
            case 1 -> 1;
            case 2 -> 4;
            case 4 -> 8;
            case 8 -> 12;
            case 16 -> 2;
            default -> 0;
        };
    }

    /**
     * The InfiniBand name of {@link #activeSpeed()}: SDR, DDR, QDR, FDR10, FDR, EDR, HDR or NDR
     * (codes 1 to 128, one bit each). RoCE providers report the nearest one to the Ethernet speed.
     *
     * @return the name, or {@code null} for a code this layer does not know
     */
    public String activeSpeedName() {
        int i = speedIndex(activeSpeed);
        return i < 0 ? null : SPEED_NAMES[i];
    }

    /**
     * The nominal data rate of one lane at {@link #activeSpeed()}, in Gb/s, as {@code ibv_devinfo}
     * prints it (SDR 2.5, DDR 5, QDR and FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100).
     *
     * @return the rate, or {@link Double#NaN} for a code this layer does not know
     */
    public double laneGbps() {
        int i = speedIndex(activeSpeed);
        return i < 0 ? Double.NaN : LANE_GBPS[i];
    }

    /**
     * The link's nominal data rate: {@link #activeLanes()} times {@link #laneGbps()}.
     *
     * @return Gb/s, or {@link Double#NaN} when width or speed is a code this layer does not know
     */
    public double linkGbps() {
        int lanes = activeLanes();
        return lanes == 0 ? Double.NaN : lanes * laneGbps();
    }

    /**
     * The name of {@link #physicalState()} as {@code ibv_devinfo} prints it (5 is LinkUp).
     *
     * @return Sleep, Polling, Disabled, PortConfigurationTraining, LinkUp, LinkErrorRecovery or
     *         PhyTest; {@code null} for a code this layer does not know
     */
    public String physicalStateName() {
        return physicalState >= 1 && physicalState <= PHYS_STATE_NAMES.length ? PHYS_STATE_NAMES[physicalState - 1] : null;
    }

    private static final String[] PHYS_STATE_NAMES = {"Sleep", "Polling", "Disabled", "PortConfigurationTraining",
        "LinkUp", "LinkErrorRecovery", "PhyTest"};
    private static final String[] SPEED_NAMES = {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"};
    private static final double[] LANE_GBPS = {2.5, 5, 10, 10, 14, 25, 50, 100};

    private static int speedIndex(int code) {
        return code > 0 && Integer.bitCount(code) == 1 && code <= 128 ? Integer.numberOfTrailingZeros(code) : -1;
    }
}
