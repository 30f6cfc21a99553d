package dev.rdmarpc.ibverbs;

import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * libibverbs on a host without RDMA devices (and, here, without RDMA kernel support): the device
 * list is empty or refused with a clear errno, nothing crashes, errors are clear.
 */
class IbverbsHostTest {
    private static final int ENOENT = 2;
    private static final int EINVAL = 22;

    private static boolean hostHasRdmaDevices() throws Exception {
        Path sys = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(sys)) {
            return false;
        }
        try (var entries = Files.list(sys)) {
            return entries.findAny().isPresent();
        }
    }

    @Test
    void libibverbsIsAvailableWhereInstalled() {
        // CI and this project's machines install libibverbs1; a failure here means it is missing.
        assertTrue(Ibverbs.isAvailable(), () -> "libibverbs: " + Ibverbs.unavailabilityCause());
        assertNull(Ibverbs.unavailabilityCause());
        Ibverbs.ensureAvailability();
    }

    @Test
    void deviceListIsEmptyOrRefusedWithErrno() throws Exception {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
        boolean devices = hostHasRdmaDevices();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            count.set(JAVA_INT, 0, -1);
            MemorySegment list;
            try {
                list = VerbsNative.ibv_get_device_list(count);
            } catch (VerbsException e) {
                // rdma-core refuses (NULL, errno ENOSYS) when the kernel has no RDMA/uverbs support.
                System.out.println("ibv_get_device_list: " + e.getMessage());
                assertFalse(devices, "devices exist, yet: " + e.getMessage());
                assertEquals("ibv_get_device_list", e.operation());
                assertTrue(e.errno() > 0, e.getMessage());
                assertTrue(e.getMessage().contains(VerbsNative.strerror(e.errno())), e.getMessage());
                return;
            }
            try {
                int n = count.get(JAVA_INT, 0);
                System.out.println("ibv_get_device_list: " + n + " devices");
                if (!devices) {
                    assertEquals(0, n, "no /sys/class/infiniband device, yet ibv_get_device_list counts " + n);
                }
                for (int i = 0; i < n; i++) {
                    assertNotEquals(0, list.getAtIndex(ADDRESS, i).address(), "entry " + i);
                }
                assertEquals(0, list.getAtIndex(ADDRESS, n).address(), "the list is NULL-terminated");
            } finally {
                ibverbs_h.ibv_free_device_list(list);
            }
        }
    }

    @Test
    void openingNoDeviceIsAClearErrorNotACrash() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsNative.ibv_open_device(MemorySegment.NULL));
        assertEquals("device is NULL", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> VerbsNative.ibv_alloc_pd(MemorySegment.NULL));
    }

    @Test
    void missingLibraryGivesOneClearException() {
        VerbsUnavailableException e = Ibverbs.probe("libibverbs-does-not-exist.so.1");
        assertTrue(e.getMessage().startsWith("RDMA verbs library libibverbs-does-not-exist.so.1 could not be loaded;"),
                e.getMessage());
        assertTrue(e.getMessage().contains("install the libibverbs1 package"), e.getMessage());
        assertTrue(e.getMessage().contains("ibverbs-providers"), e.getMessage());
        assertTrue(e.getCause() instanceof IllegalArgumentException, String.valueOf(e.getCause()));
        assertNull(e.operation());
    }

    @Test
    void errnoTextsAndChecks() {
        assertEquals("No such file or directory", VerbsNative.strerror(ENOENT));
        VerbsException e = assertThrows(VerbsException.class, () -> VerbsNative.check("ibv_modify_qp", EINVAL));
        assertEquals("ibv_modify_qp failed: Invalid argument (errno 22)", e.getMessage());
        assertEquals(EINVAL, e.errno());
        assertEquals("ibv_modify_qp", e.operation());
        assertEquals(EINVAL, assertThrows(VerbsException.class, () -> VerbsNative.check("x", -EINVAL)).errno());
        VerbsNative.check("ibv_destroy_qp", 0);
    }

    @Test
    void errnoIsCapturedFromTheCall() throws Throwable {
        // close(-1) fails with EBADF (9): proves the capture plumbing on a call that surely sets errno.
        var linker = java.lang.foreign.Linker.nativeLinker();
        var close = VerbsNative.downcallCapturingErrno(linker.defaultLookup().find("close").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MemorySegment state = VerbsNative.callState();
        int rc = (int) close.invokeExact(state, -1);
        assertEquals(-1, rc);
        assertEquals(9, VerbsNative.errno(state));
        assertEquals("Bad file descriptor", VerbsNative.strerror(VerbsNative.errno(state)));
        assertTrue(VerbsNative.callState() == state, "one call state per thread");
    }
}
