package dev.rdmarpc.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds a folder shaped like {@code /sys/class/infiniband} for the tests. */
final class FakeSysfs {
    private final Path root;

    FakeSysfs(Path root) {
        this.root = root;
    }

    Path root() {
        return root;
    }

    /** Adds a one-port RoCE device: a link-local GID at index 0 and the IPv4-mapped GID of {@code ipv4} at 1. */
    FakeSysfs device(String name, String state, String ipv4) throws IOException {
        Path port = root.resolve(name).resolve("ports").resolve("1");
        Files.createDirectories(port.resolve("gids"));
        Files.writeString(port.resolve("state"), state + "\n");
        Files.writeString(port.resolve("gids").resolve("0"), "fe80:0000:0000:0000:dc7f:d8ff:fecf:5fe4\n");
        String[] b = ipv4 == null ? null : ipv4.split("\\.");
        String mapped = b == null
                ? "0000:0000:0000:0000:0000:0000:0000:0000"
                : String.format("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", Integer.parseInt(b[0]),
                        Integer.parseInt(b[1]), Integer.parseInt(b[2]), Integer.parseInt(b[3]));
        Files.writeString(port.resolve("gids").resolve("1"), mapped + "\n");
        Files.writeString(port.resolve("gids").resolve("2"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
        return this;
    }

    static final String ACTIVE = "4: ACTIVE";
    static final String DOWN = "1: DOWN";
}
