package dev.rdmarpc.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The RDMA devices and addresses an RDMA test uses, resolved from the environment contract of the
 * Soft-RoCE VM ({@code scripts/softroce-vm}) and from sysfs ({@code /sys/class/infiniband}).
 *
 * <p>Variables: {@code RDMARPC_IN_VM} ({@code 1} inside the VM), {@code RDMARPC_DEV0},
 * {@code RDMARPC_DEV1} (device names, {@code rxe0}/{@code rxe1} in the VM), {@code RDMARPC_ADDR0},
 * {@code RDMARPC_ADDR1} (the IPv4 address behind each device, {@code 198.18.0.1}/{@code 198.18.0.2}).
 * Outside the VM unset variables default to: device 0 = the first device with an ACTIVE port, device 1 =
 * device 0, each address = the first IPv4-mapped GID of the device's port. Inside the VM all four must be
 * set and must match sysfs.
 *
 * <p>Immutable; {@link #problems()} lists every reason the environment is unusable (empty when usable).
 */
public final class RdmaEnvironment {
    public static final String IN_VM = "RDMARPC_IN_VM";
    public static final String DEV0 = "RDMARPC_DEV0";
    public static final String DEV1 = "RDMARPC_DEV1";
    public static final String ADDR0 = "RDMARPC_ADDR0";
    public static final String ADDR1 = "RDMARPC_ADDR1";
    /** Where Linux lists RDMA devices. */
    public static final Path SYSFS = Path.of("/sys/class/infiniband");

    private final boolean inVm;
    private final String device0;
    private final String device1;
    private final int port0;
    private final int port1;
    private final String address0;
    private final String address1;
    private final List<String> problems;

    private RdmaEnvironment(boolean inVm, End end0, End end1, List<String> problems) {
        this.inVm = inVm;
        this.device0 = end0.device;
        this.device1 = end1.device;
        this.port0 = end0.port;
        this.port1 = end1.port;
        this.address0 = end0.address;
        this.address1 = end1.address;
        this.problems = List.copyOf(problems);
    }

    /** Resolves the environment of this process: {@link System#getenv()} and {@link #SYSFS}. */
    public static RdmaEnvironment discover() {
        return discover(System.getenv(), SYSFS);
    }

    /**
     * Resolves the environment from the given variables and sysfs folder (the {@code infiniband} class
     * folder, normally {@link #SYSFS}).
     */
    public static RdmaEnvironment discover(Map<String, String> env, Path sysfs) {
        boolean inVm = "1".equals(env.get(IN_VM));
        List<String> problems = new ArrayList<>();
        if (inVm) {
            for (String name : List.of(DEV0, DEV1, ADDR0, ADDR1)) {
                if (blank(env.get(name))) {
                    problems.add(name + " is not set, although " + IN_VM + "=1 (scripts/softroce-vm sets it)");
                }
            }
        }
        List<String> devices = listDevices(sysfs);
        if (devices.isEmpty()) {
            problems.add("no RDMA device: " + sysfs + " is missing or empty");
            return new RdmaEnvironment(inVm, End.NONE, End.NONE, problems);
        }
        String dev0 = env.get(DEV0);
        if (blank(dev0)) {
            dev0 = devices.stream().filter(d -> activePort(sysfs.resolve(d)).isPresent()).findFirst().orElse(null);
            if (dev0 == null) {
                problems.add("no RDMA device has an ACTIVE port; devices: " + devices);
                return new RdmaEnvironment(inVm, End.NONE, End.NONE, problems);
            }
        }
        String dev1 = blank(env.get(DEV1)) ? dev0 : env.get(DEV1);
        End end0 = resolveEnd(sysfs, devices, dev0, DEV0, env.get(ADDR0), ADDR0, problems);
        End end1 = resolveEnd(sysfs, devices, dev1, DEV1, env.get(ADDR1), ADDR1, problems);
        return new RdmaEnvironment(inVm, end0, end1, problems);
    }

    private static End resolveEnd(Path sysfs, List<String> devices, String device, String deviceVar,
                                  String address, String addressVar, List<String> problems) {
        if (!devices.contains(device)) {
            problems.add("RDMA device " + device + " (" + deviceVar + ") does not exist; present: " + devices);
            return new End(device, 0, address);
        }
        Path dir = sysfs.resolve(device);
        Optional<Integer> port = activePort(dir);
        if (port.isEmpty()) {
            problems.add("RDMA device " + device + " (" + deviceVar + ") has no ACTIVE port: " + portStates(dir));
            return new End(device, 0, address);
        }
        List<String> ipv4 = ipv4Gids(dir.resolve("ports").resolve(port.get().toString()));
        if (blank(address)) {
            if (ipv4.isEmpty()) {
                problems.add("RDMA device " + device + " port " + port.get() + " has no IPv4-mapped GID; set "
                        + addressVar);
                return new End(device, port.get(), null);
            }
            return new End(device, port.get(), ipv4.getFirst());
        }
        if (!ipv4.contains(address)) {
            problems.add("RDMA device " + device + " port " + port.get() + " has no GID for " + address + " ("
                    + addressVar + "); its IPv4 GIDs: " + ipv4);
        }
        return new End(device, port.get(), address);
    }

    private record End(String device, int port, String address) {
        static final End NONE = new End(null, 0, null);
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static List<String> listDevices(Path sysfs) {
        if (!Files.isDirectory(sysfs)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(sysfs)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + sysfs, e);
        }
    }

    private static List<Path> ports(Path device) {
        Path ports = device.resolve("ports");
        if (!Files.isDirectory(ports)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(ports)) {
            return s.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .sorted(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString())))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + ports, e);
        }
    }

    /** The first port whose {@code state} reads {@code 4: ACTIVE}. */
    private static Optional<Integer> activePort(Path device) {
        return ports(device).stream()
                .filter(p -> readTrimmed(p.resolve("state")).endsWith("ACTIVE"))
                .map(p -> Integer.parseInt(p.getFileName().toString()))
                .findFirst();
    }

    private static String portStates(Path device) {
        List<String> states = ports(device).stream()
                .map(p -> "port " + p.getFileName() + " " + readTrimmed(p.resolve("state")))
                .toList();
        return states.isEmpty() ? "no ports" : String.join(", ", states);
    }

    /** The IPv4 addresses of the port's IPv4-mapped GIDs ({@code ::ffff:a.b.c.d}), in table order. */
    static List<String> ipv4Gids(Path port) {
        Path gids = port.resolve("gids");
        if (!Files.isDirectory(gids)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(gids)) {
            return s.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .sorted(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString())))
                    .map(p -> ipv4Mapped(readTrimmed(p)))
                    .filter(a -> a != null)
                    .distinct()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + gids, e);
        }
    }

    /** {@code 0000:0000:0000:0000:0000:ffff:c612:0001} -> {@code 198.18.0.1}; null when not IPv4-mapped. */
    static String ipv4Mapped(String gid) {
        String[] g = gid.split(":");
        if (g.length != 8) {
            return null;
        }
        try {
            for (int i = 0; i < 5; i++) {
                if (Integer.parseInt(g[i], 16) != 0) {
                    return null;
                }
            }
            if (Integer.parseInt(g[5], 16) != 0xffff) {
                return null;
            }
            int hi = Integer.parseInt(g[6], 16);
            int lo = Integer.parseInt(g[7], 16);
            return (hi >>> 8) + "." + (hi & 0xff) + "." + (lo >>> 8) + "." + (lo & 0xff);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Reads a sysfs attribute; empty when it is missing or unreadable (sysfs answers EINVAL for unset GID types). */
    static String readTrimmed(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            return "";
        }
    }

    /** True inside the Soft-RoCE VM ({@code RDMARPC_IN_VM=1}). */
    public boolean inVm() {
        return inVm;
    }

    /** True when both devices exist, have an ACTIVE port and an IPv4 address. */
    public boolean usable() {
        return problems.isEmpty();
    }

    /** Every reason the environment is unusable; empty when {@link #usable()}. */
    public List<String> problems() {
        return problems;
    }

    /** Device 0's name ({@code rxe0} in the VM). */
    public String device0() {
        return require(device0);
    }

    /** Device 1's name ({@code rxe1} in the VM); device 0 when only one device is configured. */
    public String device1() {
        return require(device1);
    }

    /** The ACTIVE port of device 0 used by the tests. */
    public int port0() {
        require(device0);
        return port0;
    }

    /** The ACTIVE port of device 1 used by the tests. */
    public int port1() {
        require(device1);
        return port1;
    }

    /** The IPv4 address behind device 0 ({@code 198.18.0.1} in the VM). */
    public String address0() {
        return require(address0);
    }

    /** The IPv4 address behind device 1 ({@code 198.18.0.2} in the VM). */
    public String address1() {
        return require(address1);
    }

    private <T> T require(T value) {
        if (!usable()) {
            throw new IllegalStateException("RDMA environment unusable: " + String.join("; ", problems));
        }
        return value;
    }

    @Override
    public String toString() {
        return usable()
                ? device0 + ":" + port0 + " (" + address0 + ") <-> " + device1 + ":" + port1 + " (" + address1 + ")"
                        + (inVm ? " in the Soft-RoCE VM" : "")
                : "unusable RDMA environment: " + String.join("; ", problems);
    }
}
