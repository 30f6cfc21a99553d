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
}
