package dev.rdmarpc.ibverbs.verbs;

/**
 * One valid entry of a port's GID table ({@code struct ibv_gid_entry}, {@link Context#gidTable(int)}).
 *
 * @param port     the port number (from 1)
 * @param index    the GID index, the {@code sgid_index} a queue pair uses to send from this GID
 * @param gid      the GID
 * @param type     IB, RoCE v1 or RoCE v2
 * @param ifIndex  the network interface the entry belongs to (RoCE), or 0
 * @param netdev   that interface's name ({@code veth0}), or {@code null} when there is none
 */
public record GidEntry(int port, int index, Gid gid, GidType type, int ifIndex, String netdev) {
}
