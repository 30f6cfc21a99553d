package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.verbs.DeviceInfo;
import dev.rdmarpc.ibverbs.verbs.Verbs;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The environment of the RDMA tests: the Soft-RoCE VM's contract ({@code RDMARPC_IN_VM},
 * {@code RDMARPC_DEV0/1}, {@code RDMARPC_ADDR0/1}). Outside the VM a test without devices is
 * skipped; inside it, a missing device fails the test.
 */
final class RdmaTestEnv {
    static final boolean IN_VM = "1".equals(System.getenv("RDMARPC_IN_VM"));

    private RdmaTestEnv() {
    }

    /** The client side's address (rxe0's network interface in the VM). */
    static String clientAddress() {
        return env("RDMARPC_ADDR0", "198.18.0.1");
    }

    /** The server side's address (rxe1's network interface in the VM). */
    static String serverAddress() {
        return env("RDMARPC_ADDR1", "198.18.0.2");
    }

    static InetSocketAddress serverBind() {
        return new InetSocketAddress(serverAddress(), 0);
    }

    static String device0() {
        return env("RDMARPC_DEV0", "rxe0");
    }

    static String device1() {
        return env("RDMARPC_DEV1", "rxe1");
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    /** Skips (outside the VM) or fails (inside) unless both test devices exist. */
    static void requireDevices() {
        String why = null;
        if (!Ibverbs.isAvailable()) {
            why = "libibverbs is not available: " + Ibverbs.unavailabilityCause();
        } else {
            List<String> names = Verbs.devices().stream().map(DeviceInfo::name).toList();
            if (!names.contains(device0()) || !names.contains(device1())) {
                why = "RDMA devices " + device0() + " and " + device1() + " not found (have " + names + ")";
            }
        }
        if (why == null) {
            return;
        }
        if (IN_VM) {
            fail("inside the Soft-RoCE VM but " + why);
        }
        assumeTrue(false, why + "; run the RDMA tests in the Soft-RoCE VM (scripts/softroce-vm)");
    }

    /** Sum of one rxe hardware counter over both test devices, or -1 when the kernel does not expose it. */
    static long hwCounter(String name) {
        long sum = 0;
        boolean any = false;
        for (String dev : new String[]{device0(), device1()}) {
            Path p = Path.of("/sys/class/infiniband", dev, "ports/1/hw_counters", name);
            try {
                sum += Long.parseLong(Files.readString(p).trim());
                any = true;
            } catch (Exception e) {
                // not exposed
            }
        }
        return any ? sum : -1;
    }

    /** A small RDMA configuration for tests (a 64 MiB pool instead of 512 MiB). */
    static RdmaConfig smallConfig() {
        return new RdmaConfig().poolBytes(64L << 20).slabBytes(4L << 20);
    }
}
