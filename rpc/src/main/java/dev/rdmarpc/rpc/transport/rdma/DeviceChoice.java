package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.DeviceInfo;
import dev.rdmarpc.ibverbs.verbs.Gid;
import dev.rdmarpc.ibverbs.verbs.GidEntry;
import dev.rdmarpc.ibverbs.verbs.GidType;
import dev.rdmarpc.ibverbs.verbs.Verbs;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Choice;
import dev.rdmarpc.rpc.transport.rdma.DeviceTable.Device;
import java.io.IOException;
import java.net.InetAddress;
import java.util.List;

/**
 * How a {@link DeviceTable} chooses the device and GID index for the connections from one local
 * address: the configured device, or the one with a RoCE v2 GID for that address; the configured GID
 * index, or that GID's. Runs under the table's lock (its {@code choose}).
 */
final class DeviceChoice {
    private DeviceChoice() {
    }

    /** The device {@code name} (opened if needed) and the GID index for {@code local} on it. */
    static Choice named(DeviceTable table, RdmaConfig config, String name, InetAddress local) throws IOException {
        Device d = table.device(name);
        if (config.gidIndex() != RdmaConfig.AUTO_GID_INDEX) {
            return new Choice(d, config.gidIndex());
        }
        if (!d.portAttributes.isEthernet()) {
            return new Choice(d, 0); // InfiniBand: GID 0 is the port GID
        }
        try {
            return new Choice(d, d.context.gidFor(d.port, local).index());
        } catch (IllegalArgumentException e) {
            throw new IOException("device " + name + " cannot send from " + local.getHostAddress() + ": " + e.getMessage(), e);
        }
    }

    /** The device with a RoCE v2 GID for {@code local}: an open one, else the first other that has one (opened). */
    static Choice byAddress(DeviceTable table, RdmaConfig config, InetAddress local) throws IOException {
        Gid wanted = Gid.of(local);
        for (Device open : table.opened()) {
            int gid = gidIndexOf(open.context, open.port, wanted);
            if (gid >= 0) {
                return new Choice(open, config.gidIndex() != RdmaConfig.AUTO_GID_INDEX ? config.gidIndex() : gid);
            }
        }
        List<DeviceInfo> all = Verbs.devices();
        StringBuilder seen = new StringBuilder();
        for (DeviceInfo info : all) {
            if (table.find(info.name()) != null) {
                continue;
            }
            int gid;
            try (Context ctx = Context.open(info.name())) {
                gid = gidIndexOf(ctx, config.port(), wanted);
            } catch (RuntimeException e) {
                seen.append(' ').append(info.name()).append(" (").append(e.getMessage()).append(')');
                continue;
            }
            if (gid >= 0) {
                Device d = table.device(info.name());
                return new Choice(d, config.gidIndex() != RdmaConfig.AUTO_GID_INDEX ? config.gidIndex() : gid);
            }
            seen.append(' ').append(info.name());
        }
        throw new IOException("no RDMA device has a RoCE v2 GID for the local address " + local.getHostAddress()
                + " (devices:" + (all.isEmpty() ? " none" : seen.toString()) + "); name one with RdmaConfig.device");
    }

    private static int gidIndexOf(Context ctx, int port, Gid wanted) {
        for (GidEntry e : ctx.gidTable(port)) {
            if (e.type() == GidType.ROCE_V2 && e.gid().equals(wanted)) {
                return e.index();
            }
        }
        return -1;
    }
}
