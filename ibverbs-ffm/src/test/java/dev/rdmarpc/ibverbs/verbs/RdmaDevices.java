package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The two Soft-RoCE devices of the test VM (environment contract: RDMARPC_IN_VM, RDMARPC_DEV0/1,
 * RDMARPC_ADDR0/1). Outside the VM, a missing device skips the test; inside it (RDMARPC_IN_VM=1) a
 * missing device fails it, so an RDMA run cannot pass by skipping.
 */
final class RdmaDevices {
    static final boolean IN_VM = "1".equals(System.getenv("RDMARPC_IN_VM"));
    static final String DEV0 = env("RDMARPC_DEV0", "rxe0");
    static final String DEV1 = env("RDMARPC_DEV1", "rxe1");
    static final String ADDR0 = env("RDMARPC_ADDR0", "198.18.0.1");
    static final String ADDR1 = env("RDMARPC_ADDR1", "198.18.0.2");

    private RdmaDevices() {
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }

    /** Skips (outside the VM) or fails (inside) unless both devices exist. */
    static void require() {
        String problem = null;
        if (!Ibverbs.isAvailable()) {
            problem = "libibverbs not loadable: " + Ibverbs.unavailabilityCause();
        } else {
            List<String> names = Verbs.devices().stream().map(DeviceInfo::name).toList();
            if (!names.contains(DEV0) || !names.contains(DEV1)) {
                problem = "RDMA devices " + DEV0 + " and " + DEV1 + " needed, found " + names;
            }
        }
        if (problem != null) {
            if (IN_VM) {
                fail("inside the Soft-RoCE VM: " + problem);
            }
            assumeTrue(false, problem + " (run in the Soft-RoCE VM)");
        }
    }

    static InetAddress address(String text) {
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
