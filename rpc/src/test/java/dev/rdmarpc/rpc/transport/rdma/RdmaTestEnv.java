package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.testsupport.RdmaEnvironment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Addresses, devices and counters of the RDMA tests, from the Soft-RoCE VM's environment contract
 * ({@link RdmaEnvironment}); the tests themselves are {@code @RdmaTest}s (skipped without devices
 * outside the VM, failed inside it).
 */
final class RdmaTestEnv {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    private RdmaTestEnv() {
    }

    /** @return true inside the Soft-RoCE VM (whose devices are rxe) */
    static boolean inVm() {
        return ENV.inVm();
    }

    /** The client side's address (rxe0's network interface in the VM). */
    static String clientAddress() {
        return ENV.address0();
    }

    /** The server side's address (rxe1's network interface in the VM). */
    static String serverAddress() {
        return ENV.address1();
    }

    static InetSocketAddress serverBind() {
        return new InetSocketAddress(serverAddress(), 0);
    }

    static String device0() {
        return ENV.device0();
    }

    static String device1() {
        return ENV.device1();
    }

    /** Sum of one rxe hardware counter over both test devices, or -1 when the kernel does not expose it. */
    static long hwCounter(String name) {
        long sum = 0;
        boolean any = false;
        for (String dev : new String[]{device0(), device1()}) {
            if (dev == null) {
                continue;
            }
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

    /** Every rxe hardware counter of both test devices that is not zero, for diagnostics. */
    static String hwCounters() {
        StringBuilder sb = new StringBuilder();
        for (String dev : new String[]{device0(), device1()}) {
            if (dev == null) {
                continue;
            }
            Path dir = Path.of("/sys/class/infiniband", dev, "ports/1/hw_counters");
            sb.append(dev).append(':');
            try (var files = Files.list(dir)) {
                for (Path p : files.sorted().toList()) {
                    String v = Files.readString(p).trim();
                    if (!v.equals("0")) {
                        sb.append(' ').append(p.getFileName()).append('=').append(v);
                    }
                }
            } catch (Exception e) {
                sb.append(" (not readable: ").append(e.getMessage()).append(')');
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * A small RDMA configuration for tests: a 64 MiB pool instead of 512 MiB, and a handshake timeout
     * for the emulated CPU of the VM (the first connection of a JVM under TCG spends seconds in
     * first-time FFM linkage and verbs setup).
     */
    static RdmaConfig smallConfig() {
        // every client in the VM comes from one address: no share per address here (RdmaLimitsTest sets one)
        return new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                .timeouts(t -> t.handshake(java.time.Duration.ofMinutes(2))).poolBytesPerAddress(1L << 40);
    }
}
