package dev.rdmarpc.bench.stack;

import dev.rdmarpc.bench.BenchException;
import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.GidEntry;
import dev.rdmarpc.ibverbs.verbs.GidType;
import dev.rdmarpc.ibverbs.verbs.NoSuchDeviceException;
import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * The address {@code local --transport rdma} listens on when none is given: the IPv4 address behind
 * the first RoCE v2 GID of an active port (of {@code --device} when given, else of the first device
 * with an active port). Loopback has no RDMA device behind it, so the TCP default cannot serve here.
 */
final class RdmaLocalAddress {
    private RdmaLocalAddress() {
    }

    /** @param device a device name, or null for the first device with an active port */
    static InetAddress find(String device) {
        if (!Ibverbs.isAvailable()) {
            throw new BenchException("--transport rdma needs libibverbs, which cannot be loaded here: "
                    + Ibverbs.unavailabilityCause().getMessage());
        }
        try (Context ctx = device == null ? Context.openFirstActive() : Context.open(device)) {
            int ports = ctx.queryDevice().physicalPortCount();
            for (int port = 1; port <= ports; port++) {
                if (!ctx.queryPort(port).isActive()) {
                    continue;
                }
                for (GidEntry g : ctx.gidTable(port)) {
                    if (g.type() == GidType.ROCE_V2 && g.gid().isIpv4Mapped()
                            && g.gid().toInetAddress() instanceof Inet4Address a) {
                        return a;
                    }
                }
            }
            throw new BenchException("RDMA device " + ctx.name() + " has no active port with an IPv4 RoCE v2 GID;"
                    + " give the address to listen on with --address");
        } catch (NoSuchDeviceException e) {
            throw new BenchException("--transport rdma: " + e.getMessage() + "; run `doctor` to see what is there", e);
        }
    }
}
