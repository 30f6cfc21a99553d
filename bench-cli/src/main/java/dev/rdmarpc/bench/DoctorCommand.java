package dev.rdmarpc.bench;

import java.io.IOException;
import java.io.PrintWriter;
import dev.rdmarpc.cuda.Cuda;
import dev.rdmarpc.cuda.CudaDevice;
import dev.rdmarpc.cuda.CudaException;
import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.DeviceInfo;
import dev.rdmarpc.ibverbs.verbs.LinkLayer;
import dev.rdmarpc.ibverbs.verbs.PortAttributes;
import dev.rdmarpc.ibverbs.verbs.Verbs;
import dev.rdmarpc.rdmacm.Rdmacm;
import dev.rdmarpc.bench.tls.TlsCheck;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What this machine offers for RDMA and GPU memory, in plain words: whether the bindings' libraries
 * load ({@link Ibverbs}, {@link Rdmacm}, {@link Cuda}), the devices libibverbs lists, each port's
 * attributes ({@code ibv_query_port}: state, active and max MTU, link layer, width and speed), GIDs
 * and netdevs from sysfs, the GPUs the CUDA driver lists ({@link CudaDevice}) with the way their
 * memory would reach the NIC, and at the end what is missing. Each device is opened only to query
 * its ports and closed again; nothing else is created on it.
 *
 * <p>Given TLS files ({@code --tls-cert} and {@code --tls-key}, {@code --tls-keystore}, {@code --tls-trust}),
 * it also loads them with rdmarpc's {@code TlsConfig} and says what they hold or why they do not load
 * ({@link TlsCheck}); then its exit status is 1 when any of them cannot be used.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Reports RDMA devices, ports, GIDs, CUDA and GPUDirect availability in plain words.",
            "Lists devices, ports (state, active and max MTU, link layer, speed), GIDs with their types and netdevs,",
            "the GID a local address would use (--address), the GPUs the CUDA driver sees, and whether libibverbs,",
            "librdmacm, CUDA and GPUDirect registration are available; ends with what is missing.",
            "With --tls-cert and --tls-key, --tls-keystore or --tls-trust: also whether those TLS files load as a",
            "server's keys or a client's trusted issuers, what they hold (subject, issuer, validity, key algorithm,",
            "names), or why not; exit status 1 when one cannot be used."})
final class DoctorCommand implements Callable<Integer> {
    static final Path SYS_INFINIBAND = Path.of("/sys/class/infiniband");
    /** Width of the label column of a port's or a GPU's attributes. */
    private static final String FIELD = "      %-15s %s%n";

    @Option(names = "--address", paramLabel = "IP", description = "Show the GID a connection from this local IP address would use.")
    String address;

    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "Check this PEM certificate chain (the server's certificate first) with --tls-key, as "
                    + "`bench-cli server --tls --tls-cert` would load it.")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE",
            description = "The private key for --tls-cert: a PEM file, unencrypted PKCS#8 (BEGIN PRIVATE KEY).")
    Path tlsKey;

    @Option(names = "--tls-keystore", paramLabel = "FILE",
            description = "Check this key store (PKCS#12 or JKS) as a server's keys: it must hold a private key with "
                    + "its certificate chain.")
    Path tlsKeystore;

    @Option(names = "--tls-keystore-password", paramLabel = "PASSWORD",
            description = "Password of --tls-keystore and of its key (default: empty).")
    String tlsKeystorePassword;

    @Option(names = "--tls-trust", paramLabel = "FILE",
            description = "Check this PEM file of issuers to trust, as `bench-cli client --tls --tls-trust` would load it.")
    Path tlsTrust;

    @Spec
    CommandSpec spec;

    /** What the report found missing, in plain words, for the summary at the end. */
    private final List<String> missing = new ArrayList<>();
    /** Whether TLS files given do not load (exit status 1). */
    private boolean tlsUnusable;

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
        checkTlsOptions();
        PrintWriter out = spec.commandLine().getOut();
        out.println("Libraries");
        library(out, Ibverbs.SONAME, "RDMA verbs", Ibverbs.isAvailable(), Ibverbs.unavailabilityCause(),
                "no RDMA verbs library (" + Ibverbs.SONAME + " does not load), so only the TCP transport can run");
        library(out, Rdmacm.SONAME, "RDMA connection manager", Rdmacm.isAvailable(), Rdmacm.unavailabilityCause(),
                "no RDMA connection manager (" + Rdmacm.SONAME + " does not load), so RDMA connections cannot be set up");
        library(out, Cuda.SONAME, "CUDA driver API, for GPU attachments", Cuda.isAvailable(), Cuda.unavailabilityCause(),
                "no CUDA driver was found (" + Cuda.SONAME + " does not load), so there are no GPU attachments");
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
        if (tlsCert != null || tlsKeystore != null || tlsTrust != null) {
            tls(out);
            out.println();
        }
        summary(out);
        out.flush();
        return tlsUnusable ? 1 : 0;
    }

    /** The TLS options come in pairs: --tls-cert with --tls-key, --tls-keystore-password with --tls-keystore. */
    private void checkTlsOptions() {
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new ParameterException(spec.commandLine(), tlsCert == null ? "--tls-key needs --tls-cert"
                    : "--tls-cert needs --tls-key");
        }
        if (tlsKeystorePassword != null && tlsKeystore == null) {
            throw new ParameterException(spec.commandLine(), "--tls-keystore-password only applies with --tls-keystore");
        }
    }

    /** Each TLS file given, loaded as rdmarpc loads it: what it holds, or why it cannot be used. */
    private void tls(PrintWriter out) {
        out.println("TLS");
        if (tlsCert != null) {
            tlsResult(out, "key and certificate (" + tlsCert + ", " + tlsKey + ")", "the TLS key and certificate given",
                    TlsCheck.keys(tlsCert, tlsKey));
        }
        if (tlsKeystore != null) {
            char[] password = tlsKeystorePassword == null ? new char[0] : tlsKeystorePassword.toCharArray();
            tlsResult(out, "key store (" + tlsKeystore + ")", "the TLS key store given", TlsCheck.keyStore(tlsKeystore, password));
        }
        if (tlsTrust != null) {
            tlsResult(out, "trusted issuers (" + tlsTrust + ")", "the TLS trust file given", TlsCheck.trust(tlsTrust));
        }
    }

    private void tlsResult(PrintWriter out, String what, String inSummary, TlsCheck.Result r) {
        out.println("  " + what + ": " + (r.usable() ? "loaded" : "CANNOT BE USED - " + r.problem()));
        for (String line : r.lines()) {
            out.println("      " + line);
        }
        if (!r.usable()) {
            tlsUnusable = true;
            missing.add(inSummary + " cannot be used: " + r.problem());
        }
    }

    private void library(PrintWriter out, String soname, String what, boolean available, Throwable cause,
                         String whenMissing) {
        if (available) {
            out.println("  " + soname + ": loads (" + what + ")");
        } else {
            out.println("  " + soname + ": NOT AVAILABLE - " + (cause == null ? what + " unavailable" : cause.getMessage()));
            missing.add(whenMissing);
        }
    }

    /** The devices libibverbs itself lists (its providers must match the kernel's devices). */
    private static void verbsDevices(PrintWriter out) {
        if (!Ibverbs.isAvailable()) {
            return;
        }
        try {
            List<DeviceInfo> devices = Verbs.devices();
            out.println("libibverbs lists " + devices.size() + " device(s)" + (devices.isEmpty() ? ""
                    : ": " + String.join(", ", devices.stream().map(DeviceInfo::name).toList())));
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

    /** A device's ports as {@code ibv_query_port} reports them, or why they could not be queried. */
    record PortQuery(Map<Integer, PortAttributes> ports, String problem) {
    }

    /** Opens {@code device}, queries every port, closes it. */
    static PortQuery queryPorts(String device) {
        if (!Ibverbs.isAvailable()) {
            return new PortQuery(Map.of(), Ibverbs.SONAME + " does not load");
        }
        try (Context ctx = Context.open(device)) {
            Map<Integer, PortAttributes> ports = new LinkedHashMap<>();
            int n = ctx.queryDevice().physicalPortCount();
            for (int p = 1; p <= n; p++) {
                ports.put(p, ctx.queryPort(p));
            }
            return new PortQuery(ports, null);
        } catch (VerbsException e) {
            return new PortQuery(Map.of(), e.getMessage());
        }
    }

    private List<Gid> devices(PrintWriter out) {
        List<Gid> all = new ArrayList<>();
        out.println("RDMA devices (" + SYS_INFINIBAND + ")");
        List<Path> devices = list(SYS_INFINIBAND);
        if (devices.isEmpty()) {
            out.println("  none: no RDMA device on this machine. For Soft-RoCE: `rdma link add rxe0 type rxe netdev <if>`"
                    + " (module rdma_rxe), or use the project's Soft-RoCE VM.");
            missing.add("no RDMA device was found, so only the TCP transport can run");
            return all;
        }
        boolean anyActive = false;
        for (Path dev : devices) {
            String name = dev.getFileName().toString();
            out.println("  " + name + ": " + read(dev.resolve("node_type"), "?") + ", node GUID "
                    + read(dev.resolve("node_guid"), "?") + ", firmware " + orElse(read(dev.resolve("fw_ver"), "?"), "none reported"));
            PortQuery query = queryPorts(name);
            if (query.problem() != null) {
                out.println("    ibv_query_port not possible (" + query.problem() + "); port lines come from sysfs");
                missing.add(name + " cannot be opened through libibverbs: " + query.problem());
            }
            for (Path port : list(dev.resolve("ports"))) {
                int p = Integer.parseInt(port.getFileName().toString());
                List<Gid> gids = gids(name, p, port);
                all.addAll(gids);
                String netdev = gids.stream().map(Gid::netdev).filter(n -> !n.isEmpty()).findFirst().orElse("");
                String netdevMtu = netdev.isEmpty() ? "" : read(Path.of("/sys/class/net", netdev, "mtu"), "");
                out.println("    port " + p);
                PortAttributes a = query.ports().get(p);
                if (a != null) {
                    printPort(out, a, netdev, netdevMtu);
                    anyActive |= a.isActive();
                } else {
                    out.printf(FIELD, "state", read(port.resolve("state"), "?") + ", physical " + read(port.resolve("phys_state"), "?"));
                    out.printf(FIELD, "link layer", read(port.resolve("link_layer"), "?"));
                    out.printf(FIELD, "rate", read(port.resolve("rate"), "?"));
                    if (!netdevMtu.isEmpty()) {
                        out.printf(FIELD, "netdev MTU", netdevMtu + " (" + netdev + ")");
                    }
                    anyActive |= read(port.resolve("state"), "").contains("ACTIVE");
                }
                int typeWidth = gids.stream().mapToInt(g -> g.type().length()).max().orElse(0);
                for (Gid g : gids) {
                    out.printf(FIELD, "GID[" + g.index() + "]", (g.gid() + "  " + pad(g.type(), typeWidth)
                            + (g.netdev().isEmpty() ? "" : "  on " + g.netdev())).stripTrailing());
                }
                if (gids.isEmpty()) {
                    out.printf(FIELD, "GIDs", "none in use");
                }
            }
        }
        if (!anyActive) {
            missing.add("no RDMA port is ACTIVE, so the RDMA transport has nowhere to send");
        }
        return all;
    }

    /** One port's attributes, one aligned line each. */
    static void printPort(PrintWriter out, PortAttributes a, String netdev, String netdevMtu) {
        String physical = a.physicalStateName() == null ? "code " + a.physicalState() : a.physicalStateName();
        out.printf(FIELD, "state", a.state() + ", physical " + physical
                + (a.isActive() ? "" : " - not ACTIVE, so no traffic goes through this port"));
        out.printf(FIELD, "link layer", switch (a.linkLayer()) {
            case ETHERNET -> "Ethernet (RoCE)";
            case INFINIBAND -> "InfiniBand, LID " + a.lid() + ", subnet manager LID " + a.smLid();
            default -> a.linkLayer().toString();
        });
        String mtu = "active " + a.activeMtu().bytes() + ", max " + a.maxMtu().bytes();
        if (a.linkLayer() == LinkLayer.ETHERNET && !netdevMtu.isEmpty()) {
            mtu += " (RoCE: the largest that fits " + netdev + "'s MTU of " + netdevMtu + " bytes less headers)";
        }
        out.printf(FIELD, "MTU", mtu);
        out.printf(FIELD, "speed", speed(a));
        out.printf(FIELD, "max message", a.maxMessageSize() + " bytes");
    }

    /** "1X FDR10, 10 Gb/s", or the raw codes where they are unknown. */
    static String speed(PortAttributes a) {
        int lanes = a.activeLanes();
        String name = a.activeSpeedName();
        String width = lanes == 0 ? "width code " + a.activeWidth() : lanes + "X";
        if (name == null) {
            return width + ", speed code " + a.activeSpeed();
        }
        return width + " " + name + (lanes == 0 ? "" : ", " + gbps(a.linkGbps()) + " Gb/s");
    }

    private static String gbps(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    private static String orElse(String s, String otherwise) {
        return s.isEmpty() ? otherwise : s;
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
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

    private void gpu(PrintWriter out) {
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
        if (!Cuda.isAvailable()) {
            out.println("  CUDA devices: none listed, no CUDA driver was found (" + Cuda.SONAME + " does not load)");
            return;
        }
        List<CudaDevice> gpus;
        int version;
        try {
            version = Cuda.driverVersion();
            gpus = CudaDevice.all();
        } catch (CudaException e) {
            out.println("  CUDA devices: none listed, the CUDA driver answers " + e.getMessage());
            missing.add("the CUDA driver lists no GPU (" + e.getMessage() + ")");
            return;
        }
        out.println("  CUDA devices: " + gpus.size() + " (driver supports CUDA " + version / 1000 + "." + version % 1000 / 10 + ")");
        boolean anyDirect = false;
        for (CudaDevice g : gpus) {
            anyDirect |= printGpu(out, g.ordinal(), g.name(), g.pciBusId(), g.totalMemory(), g.computeCapability(),
                    g.supportsDmaBuf(), g.supportsGpuDirectRdma(), peermem || nvPeer);
        }
        if (gpus.isEmpty()) {
            missing.add("the CUDA driver lists no GPU");
        } else if (!anyDirect) {
            missing.add("no GPU can hand its memory to the NIC (no dma-buf, no peer-memory module), so GPU attachments"
                    + " are staged through pinned host memory");
        }
    }

    /**
     * One GPU, one aligned line per attribute, ending with the way the RDMA transport would register its
     * memory (the order of {@code dev.rdmarpc.rpc.gpu.GpuDirectSelector}: dma-buf, peer-memory, staged).
     *
     * @return whether the NIC can reach its memory directly (dma-buf or peer-memory)
     */
    static boolean printGpu(PrintWriter out, int ordinal, String name, String pciBusId, long totalMemory,
                            String computeCapability, boolean dmaBuf, boolean gpuDirectRdma, boolean peerMemoryModule) {
        out.println("    GPU " + ordinal + ": " + name);
        out.printf(FIELD, "PCI bus id", pciBusId);
        out.printf(FIELD, "memory", String.format(Locale.ROOT, "%.1f GiB", totalMemory / (double) (1L << 30)));
        out.printf(FIELD, "compute", computeCapability);
        out.printf(FIELD, "dma-buf", dmaBuf ? "yes" : "no");
        out.printf(FIELD, "GPUDirect RDMA", gpuDirectRdma ? "yes" : "no");
        String path;
        boolean direct = true;
        if (dmaBuf) {
            path = "dma-buf: exported and registered with ibv_reg_dmabuf_mr (where the NIC's driver takes dma-bufs)";
        } else if (gpuDirectRdma && peerMemoryModule) {
            path = "peer-memory: ibv_reg_mr on the device address, through the loaded peer-memory module";
        } else {
            direct = false;
            path = "staged through pinned host memory (" + (gpuDirectRdma
                    ? "no dma-buf and no peer-memory module loaded" : "the GPU supports neither dma-buf nor GPUDirect RDMA") + ")";
        }
        out.printf(FIELD, "to the NIC", path);
        return direct;
    }

    private void summary(PrintWriter out) {
        out.println("Missing");
        if (missing.isEmpty()) {
            out.println("  nothing: RDMA and GPU attachments can run on this machine");
        }
        for (String m : missing) {
            out.println("  - " + m);
        }
    }

    static List<Path> list(Path dir) {
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
