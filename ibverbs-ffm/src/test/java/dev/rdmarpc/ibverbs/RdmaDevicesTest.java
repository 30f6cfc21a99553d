package dev.rdmarpc.ibverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The RDMA devices the other RDMA tests rely on, checked from the kernel's side (sysfs, device files) and
 * from libibverbs' side (its device list, called through a plain FFM downcall).
 */
@RdmaTest
class RdmaDevicesTest {
    private static final Path SYSFS = Path.of("/sys/class/infiniband");

    @Test
    void bothDevicesAreActiveRoceV2PortsWithTheirIpv4Gid(RdmaEnvironment rdma) throws IOException {
        check(rdma.device0(), rdma.port0(), rdma.address0());
        check(rdma.device1(), rdma.port1(), rdma.address1());
    }

    private static void check(String device, int port, String ipv4) throws IOException {
        Path p = SYSFS.resolve(device).resolve("ports").resolve(Integer.toString(port));
        assertEquals("4: ACTIVE", Files.readString(p.resolve("state")).trim(), device + " port " + port);
        assertEquals("Ethernet", Files.readString(p.resolve("link_layer")).trim(), device + " link layer");
        String[] b = ipv4.split("\\.");
        String mapped = String.format("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", Integer.parseInt(b[0]),
                Integer.parseInt(b[1]), Integer.parseInt(b[2]), Integer.parseInt(b[3]));
        List<String> roceV2 = new ArrayList<>();
        try (Stream<Path> gids = Files.list(p.resolve("gids"))) {
            for (Path gid : gids.toList()) {
                if (Files.readString(gid).trim().equals(mapped)) {
                    Path type = p.resolve("gid_attrs").resolve("types").resolve(gid.getFileName());
                    roceV2.add(gid.getFileName() + ":" + Files.readString(type).trim());
                }
            }
        }
        assertTrue(roceV2.stream().anyMatch(s -> s.endsWith(":RoCE v2")),
                device + " has no RoCE v2 GID for " + ipv4 + " (found " + roceV2 + ")");
        // The user-space verbs device file of this device exists (what libibverbs opens).
        Path uverbs;
        try (Stream<Path> s = Files.list(Path.of("/sys/class/infiniband_verbs"))) {
            uverbs = s.filter(d -> Files.exists(d.resolve("ibdev")))
                    .filter(d -> readQuietly(d.resolve("ibdev")).equals(device))
                    .findFirst().orElseThrow(() -> new AssertionError("no uverbs device for " + device));
        }
        assertTrue(Files.exists(Path.of("/dev/infiniband").resolve(uverbs.getFileName())),
                "/dev/infiniband/" + uverbs.getFileName() + " is missing");
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    void libibverbsListsBothDevices(RdmaEnvironment rdma) throws Throwable {
        Linker linker = Linker.nativeLinker();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup ibverbs = SymbolLookup.libraryLookup("libibverbs.so.1", arena);
            MethodHandle getList = linker.downcallHandle(ibverbs.find("ibv_get_device_list").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            MethodHandle freeList = linker.downcallHandle(ibverbs.find("ibv_free_device_list").orElseThrow(),
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
            MethodHandle getName = linker.downcallHandle(ibverbs.find("ibv_get_device_name").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = (MemorySegment) getList.invokeExact(count);
            assertNotEquals(MemorySegment.NULL, list, "ibv_get_device_list returned NULL");
            List<String> names = new ArrayList<>();
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = devices.getAtIndex(ValueLayout.ADDRESS, i);
                    MemorySegment name = (MemorySegment) getName.invokeExact(dev);
                    names.add(name.reinterpret(64).getString(0));
                }
            } finally {
                freeList.invokeExact(list);
            }
            assertTrue(names.contains(rdma.device0()) && names.contains(rdma.device1()),
                    "libibverbs lists " + names + ", expected " + rdma.device0() + " and " + rdma.device1());
        }
    }
}
