package dev.rdmarpc.bench;

import java.io.IOException;
import java.io.PrintWriter;
import dev.rdmarpc.cuda.Cuda;
import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.rdmacm.Rdmacm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What this machine offers for RDMA and GPU memory, in plain words: whether the bindings' libraries
 * load ({@link Ibverbs}, {@link Rdmacm}, {@link Cuda}), the devices libibverbs lists, and ports, GIDs
 * and netdevs from sysfs. Nothing is opened on a device.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Reports RDMA devices, ports, GIDs, CUDA and GPUDirect availability in plain words.",
            "Lists devices, ports, GIDs with their types and netdevs, the netdev MTU, the GID a local address",
            "would use (--address), and whether libibverbs, librdmacm, CUDA and GPUDirect registration are available."})
final class DoctorCommand implements Callable<Integer> {
    static final Path SYS_INFINIBAND = Path.of("/sys/class/infiniband");

    @Option(names = "--address", paramLabel = "IP", description = "Show the GID a connection from this local IP address would use.")
    String address;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        InetAddress wanted = null;
        if (address != null) {
            try {
                wanted = InetAddress.getByName(address);
            } catch (UnknownHostException e) {
                throw new ParameterException(spec.commandLine(), "--address: '" + address + "' is not an IP address");
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("Libraries");
        library(out, Ibverbs.SONAME, "RDMA verbs", Ibverbs.isAvailable(), Ibverbs.unavailabilityCause());
        library(out, Rdmacm.SONAME, "RDMA connection manager", Rdmacm.isAvailable(), Rdmacm.unavailabilityCause());
        library(out, Cuda.SONAME, "CUDA driver API, for GPU attachments", Cuda.isAvailable(), Cuda.unavailabilityCause());
        providers(out);
        out.println();
        verbsDevices(out);
        List<Gid> gids = devices(out);
        out.println();
        if (wanted != null) {
            chooseGid(out, wanted, gids);
            out.println();
        }
        gpu(out);
        out.println();
        out.println("Not in this command yet: port attributes through ibv_query_port (active MTU, port state as the");
        out.println("verbs library sees it) and CUDA device enumeration (cuDeviceGet*); the netdev MTU above is");
        out.println("the Ethernet MTU, RoCE's active MTU is at most that minus headers, rounded down to 1024/2048/4096.");
        out.flush();
        return 0;
    }

    private static void library(PrintWriter out, String soname, String what, boolean available, Throwable cause) {
        if (available) {
            out.println("  " + soname + ": loads (" + what + ")");
        } else {
            out.println("  " + soname + ": NOT AVAILABLE - " + (cause == null ? what + " unavailable" : cause.getMessage()));
        }
    }

    /** The devices libibverbs itself lists (its providers must match the kernel's devices). */
    private static void verbsDevices(PrintWriter out) {
        if (!Ibverbs.isAvailable()) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = VerbsNative.ibv_get_device_list(count);
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret((long) n * ValueLayout.ADDRESS.byteSize());
                List<String> names = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    MemorySegment name = ibverbs_h.ibv_get_device_name(devices.getAtIndex(ValueLayout.ADDRESS, i));
                    names.add(name.equals(MemorySegment.NULL) ? "?" : name.reinterpret(256).getString(0));
                }
                out.println("libibverbs lists " + n + " device(s)" + (n == 0 ? "" : ": " + String.join(", ", names)));
            } finally {
                ibverbs_h.ibv_free_device_list(list);
            }
        } catch (VerbsException e) {
            out.println("libibverbs cannot list devices: " + e.getMessage());
        }
    }

    private static void providers(PrintWriter out) {
        List<String> found = new ArrayList<>();
        for (String dir : List.of("/usr/lib/x86_64-linux-gnu/libibverbs", "/usr/lib/aarch64-linux-gnu/libibverbs",
                "/usr/lib64/libibverbs", "/usr/lib/libibverbs")) {
            Path p = Path.of(dir);
            if (Files.isDirectory(p)) {
                try (Stream<Path> files = Files.list(p)) {
                    files.map(f -> f.getFileName().toString())
                            .filter(n -> n.startsWith("lib") && n.contains("-rdmav"))
                            .map(n -> n.substring(3, n.indexOf("-rdmav")))
                            .sorted().forEach(found::add);
                } catch (IOException e) {
                    // Unreadable directory: report what the others give.
                }
            }
        }
        out.println("  verbs providers: " + (found.isEmpty() ? "none found (install ibverbs-providers)" : String.join(", ", found)));
    }

    record Gid(String device, int port, int index, String gid, String type, String netdev) {
    }

    private static List<Gid> devices(PrintWriter out) {
        List<Gid> all = new ArrayList<>();
        out.println("RDMA devices (" + SYS_INFINIBAND + ")");
        List<Path> devices = list(SYS_INFINIBAND);
        if (devices.isEmpty()) {
            out.println("  none: no RDMA device on this machine. For Soft-RoCE: `rdma link add rxe0 type rxe netdev <if>`"
                    + " (module rdma_rxe), or use the project's Soft-RoCE VM.");
            return all;
        }
        for (Path dev : devices) {
            String name = dev.getFileName().toString();
            out.println("  " + name + ": " + read(dev.resolve("node_type"), "?") + ", node GUID "
                    + read(dev.resolve("node_guid"), "?") + ", firmware " + read(dev.resolve("fw_ver"), "?"));
            for (Path port : list(dev.resolve("ports"))) {
                int p = Integer.parseInt(port.getFileName().toString());
                String linkLayer = read(port.resolve("link_layer"), "?");
                out.println("    port " + p + ": " + read(port.resolve("state"), "?") + ", physical "
                        + read(port.resolve("phys_state"), "?") + ", " + linkLayer + ", " + read(port.resolve("rate"), "?"));
                List<Gid> gids = gids(name, p, port);
                all.addAll(gids);
                for (Gid g : gids) {
                    String mtu = g.netdev().isEmpty() ? "" : read(Path.of("/sys/class/net", g.netdev(), "mtu"), "");
                    out.println("      GID[" + g.index() + "] " + g.gid() + "  " + g.type()
                            + (g.netdev().isEmpty() ? "" : "  on " + g.netdev() + (mtu.isEmpty() ? "" : " (netdev MTU " + mtu + ")")));
                }
                if (gids.isEmpty()) {
                    out.println("      no GIDs in use");
                }
            }
        }
        return all;
    }

    private static List<Gid> gids(String device, int port, Path portDir) {
        List<Gid> out = new ArrayList<>();
        for (Path g : list(portDir.resolve("gids"))) {
            String value = read(g, "");
            if (value.isEmpty() || value.replace(":", "").chars().allMatch(c -> c == '0')) {
                continue;
            }
            String idx = g.getFileName().toString();
            out.add(new Gid(device, port, Integer.parseInt(idx), value,
                    read(portDir.resolve("gid_attrs/types/" + idx), "type unknown"),
                    read(portDir.resolve("gid_attrs/ndevs/" + idx), "")));
        }
        out.sort(Comparator.comparingInt(Gid::index));
        return out;
    }

    /** RoCE v2 GID whose value is the address (IPv4-mapped for v4) on the interface that holds it, as rdma_cm picks. */
    private static void chooseGid(PrintWriter out, InetAddress wanted, List<Gid> gids) {
        String netdev = null;
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(wanted);
            netdev = nif == null ? null : nif.getName();
        } catch (SocketException e) {
            // Falls through to "not a local address".
        }
        if (netdev == null) {
            out.println("GID for " + wanted.getHostAddress() + ": that is not an address of this machine.");
            return;
        }
        byte[] v6 = new byte[16];
        byte[] a = wanted.getAddress();
        if (wanted instanceof Inet4Address) {
            v6[10] = (byte) 0xff;
            v6[11] = (byte) 0xff;
            System.arraycopy(a, 0, v6, 12, 4);
        } else {
            v6 = a;
        }
        String hex = HexFormat.of().formatHex(v6);
        Gid best = null;
        for (Gid g : gids) {
            if (g.gid().replace(":", "").equalsIgnoreCase(hex) && netdev.equals(g.netdev())) {
                if (best == null || g.type().toLowerCase(Locale.ROOT).contains("v2")) {
                    best = g;
                }
            }
        }
        if (best == null) {
            out.println("GID for " + wanted.getHostAddress() + " (on " + netdev + "): none - no RDMA port has a GID for"
                    + " this address; RoCE needs an rxe/RoCE device bound to " + netdev + ".");
        } else {
            out.println("GID for " + wanted.getHostAddress() + " (on " + netdev + "): " + best.device() + " port "
                    + best.port() + " GID[" + best.index() + "] " + best.type() + " (use --device " + best.device()
                    + " --gid-index " + best.index() + ")");
        }
    }

    private static void gpu(PrintWriter out) {
        out.println("GPU");
        String driver = read(Path.of("/proc/driver/nvidia/version"), "");
        out.println("  NVIDIA driver: " + (driver.isEmpty() ? "not loaded (no /proc/driver/nvidia/version)"
                : driver.lines().findFirst().orElse("").strip()));
        boolean peermem = Files.exists(Path.of("/sys/module/nvidia_peermem"));
        boolean nvPeer = Files.exists(Path.of("/sys/kernel/mm/memory_peers/nv_mem"));
        if (peermem || nvPeer) {
            out.println("  GPUDirect RDMA: " + (peermem ? "nvidia_peermem" : "nv_peer_mem")
                    + " loaded, so ibv_reg_mr can register cudaMalloc memory");
        } else {
            out.println("  GPUDirect RDMA: neither nvidia_peermem nor nv_peer_mem is loaded, so registering GPU memory"
                    + " with ibv_reg_mr will fail (dma-buf registration, ibv_reg_dmabuf_mr, needs a recent driver and NIC)");
        }
    }

    private static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted(Comparator.comparing(p -> {
                String n = p.getFileName().toString();
                return n.chars().allMatch(Character::isDigit) ? String.format("%09d", Long.parseLong(n)) : n;
            })).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static String read(Path file, String otherwise) {
        try {
            return Files.readString(file).strip();
        } catch (IOException | RuntimeException e) {
            return otherwise;
        }
    }
}
