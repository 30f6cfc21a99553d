package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** librdmacm on a host that may have no RDMA device or kernel support: clear errors, no crash. */
class RdmacmHostTest {
    private static final Path RDMA_CM_DEVICE = Path.of("/dev/infiniband/rdma_cm");

    @Test
    void librdmacmIsAvailableWhereInstalled() {
        assertTrue(Rdmacm.isAvailable(), () -> "librdmacm: " + Rdmacm.unavailabilityCause());
        assertNull(Rdmacm.unavailabilityCause());
        Rdmacm.ensureAvailability();
    }

    @Test
    void eventChannelOpensOrFailsWithErrno() {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable");
        MemorySegment channel;
        try {
            channel = RdmaCmNative.rdma_create_event_channel();
        } catch (RdmaCmException e) {
            System.out.println("rdma_create_event_channel: " + e.getMessage());
            assertTrue(!Files.exists(RDMA_CM_DEVICE), RDMA_CM_DEVICE + " exists, yet: " + e.getMessage());
            assertEquals("rdma_create_event_channel", e.operation());
            assertTrue(e.errno() > 0, e.getMessage());
            assertEquals("rdma_create_event_channel failed: " + VerbsNative.strerror(e.errno()) + " (errno "
                    + e.errno() + ")", e.getMessage());
            return;
        }
        System.out.println("rdma_create_event_channel: opened " + RDMA_CM_DEVICE);
        rdmacm_h.rdma_destroy_event_channel(channel);
    }

    @Test
    void deviceListIsEmptyOrRefusedWithErrno() {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list;
            try {
                list = RdmaCmNative.rdma_get_devices(count);
            } catch (RdmaCmException e) {
                System.out.println("rdma_get_devices: " + e.getMessage());
                assertTrue(e.errno() > 0, e.getMessage());
                return;
            }
            int n = count.get(JAVA_INT, 0);
            System.out.println("rdma_get_devices: " + n + " devices");
            assertEquals(0, list.getAtIndex(ADDRESS, n).address(), "the list is NULL-terminated");
            rdmacm_h.rdma_free_devices(list);
        }
    }

    @Test
    void nullObjectsAreRefusedBeforeTheNativeCall() {
        assertEquals("id is NULL", assertThrows(IllegalArgumentException.class,
                () -> RdmaCmNative.rdma_bind_addr(MemorySegment.NULL, MemorySegment.NULL)).getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> RdmaCmNative.rdma_get_cm_event(MemorySegment.NULL, MemorySegment.NULL));
    }

    @Test
    void missingLibraryGivesOneClearException() {
        RdmaCmUnavailableException e = Rdmacm.probe("librdmacm-does-not-exist.so.1");
        assertTrue(e.getMessage().startsWith(
                "RDMA connection manager library librdmacm-does-not-exist.so.1 could not be loaded; install the "
                        + "librdmacm1 package"), e.getMessage());
        assertTrue(e.getCause() instanceof IllegalArgumentException, String.valueOf(e.getCause()));
    }
}
