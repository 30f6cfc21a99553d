package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The verbs layer on a host without RDMA devices: empty lists and clear errors, no crash. */
class VerbsHostTest {
    @BeforeAll
    static void noDevices() throws Exception {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
        Path sys = Path.of("/sys/class/infiniband");
        boolean devices = false;
        if (Files.isDirectory(sys)) {
            try (var list = Files.list(sys)) {
                devices = list.findAny().isPresent();
            }
        }
        assumeTrue(!devices, "this host has RDMA devices: the no-device tests do not apply");
    }

    @Test
    void theDeviceListIsEmpty() {
        assertEquals(List.of(), Verbs.devices());
    }

    @Test
    void openingADeviceByNameNamesItInTheError() {
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class, () -> Context.open("mlx5_7"));
        assertEquals("no RDMA device named 'mlx5_7' (no RDMA device found at all)", e.getMessage());
        assertEquals("mlx5_7", e.device());
        assertThrows(IllegalArgumentException.class, () -> Context.open(""));
        assertEquals(0, VerbsResources.live(ResourceKind.CONTEXT));
    }

    @Test
    void openingTheFirstActiveDeviceFailsClearly() {
        NoSuchDeviceException e = assertThrows(NoSuchDeviceException.class, Context::openFirstActive);
        assertEquals("no active RDMA device (no RDMA device found at all)", e.getMessage());
        assertNull(e.device());
    }

    @Test
    void wrappingNullIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Context.wrap(MemorySegment.NULL));
        assertThrows(IllegalArgumentException.class, () -> Context.wrap(null));
    }

    @Test
    void forkStatusIsReadable() {
        // Linux 5.13+ copies pinned pages on fork: libibverbs then says UNNEEDED.
        ForkStatus status = Verbs.forkStatus();
        assertTrue(status == ForkStatus.UNNEEDED || status == ForkStatus.DISABLED || status == ForkStatus.ENABLED);
        System.out.println("ibv_is_fork_initialized: " + status);
    }
}
