package dev.rdmarpc.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RdmaEnvironmentTest {
    private static final Map<String, String> VM = Map.of(
            RdmaEnvironment.IN_VM, "1",
            RdmaEnvironment.DEV0, "rxe0", RdmaEnvironment.DEV1, "rxe1",
            RdmaEnvironment.ADDR0, "198.18.0.1", RdmaEnvironment.ADDR1, "198.18.0.2");

    @TempDir
    Path dir;

    private FakeSysfs sysfs() {
        return new FakeSysfs(dir.resolve("infiniband"));
    }

    @Test
    void vmContractWithBothDevicesActiveIsUsable() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1").device("rxe1", FakeSysfs.ACTIVE, "198.18.0.2");
        RdmaEnvironment env = RdmaEnvironment.discover(VM, s.root());
        assertTrue(env.usable(), env.toString());
        assertTrue(env.inVm());
        assertEquals("rxe0", env.device0());
        assertEquals("rxe1", env.device1());
        assertEquals(1, env.port0());
        assertEquals("198.18.0.1", env.address0());
        assertEquals("198.18.0.2", env.address1());
    }

    @Test
    void noSysfsFolderMeansNoDevice() {
        RdmaEnvironment env = RdmaEnvironment.discover(Map.of(), dir.resolve("missing"));
        assertFalse(env.usable());
        assertFalse(env.inVm());
        assertTrue(env.problems().getFirst().startsWith("no RDMA device"), env.problems().toString());
        IllegalStateException e = assertThrows(IllegalStateException.class, env::device0);
        assertTrue(e.getMessage().contains("no RDMA device"), e.getMessage());
    }

    @Test
    void insideTheVmAMissingDeviceIsAProblem() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1");
        RdmaEnvironment env = RdmaEnvironment.discover(VM, s.root());
        assertEquals(List.of("RDMA device rxe1 (RDMARPC_DEV1) does not exist; present: [rxe0]"), env.problems());
    }

    @Test
    void aDownPortIsAProblem() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1").device("rxe1", FakeSysfs.DOWN, "198.18.0.2");
        RdmaEnvironment env = RdmaEnvironment.discover(VM, s.root());
        assertEquals(List.of("RDMA device rxe1 (RDMARPC_DEV1) has no ACTIVE port: port 1 1: DOWN"), env.problems());
    }

    @Test
    void insideTheVmEveryContractVariableMustBeSet() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.ACTIVE, "198.18.0.1");
        RdmaEnvironment env = RdmaEnvironment.discover(Map.of(RdmaEnvironment.IN_VM, "1"), s.root());
        assertFalse(env.usable());
        assertEquals(4, env.problems().stream().filter(p -> p.contains("is not set")).count(), env.problems().toString());
    }

    @Test
    void anAddressWithoutItsGidIsAProblem() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.ACTIVE, "10.0.0.1").device("rxe1", FakeSysfs.ACTIVE, "198.18.0.2");
        RdmaEnvironment env = RdmaEnvironment.discover(VM, s.root());
        assertEquals(List.of("RDMA device rxe0 port 1 has no GID for 198.18.0.1 (RDMARPC_ADDR0); its IPv4 GIDs: [10.0.0.1]"),
                env.problems());
    }

    @Test
    void outsideTheVmDefaultsComeFromSysfs() throws IOException {
        FakeSysfs s = sysfs().device("mlx5_0", FakeSysfs.DOWN, "10.0.0.9").device("mlx5_1", FakeSysfs.ACTIVE, "10.0.0.7");
        RdmaEnvironment env = RdmaEnvironment.discover(Map.of(), s.root());
        assertTrue(env.usable(), env.toString());
        assertEquals("mlx5_1", env.device0());
        assertEquals("mlx5_1", env.device1());
        assertEquals("10.0.0.7", env.address0());
        assertEquals("10.0.0.7", env.address1());
    }

    @Test
    void outsideTheVmDevicesWithoutActivePortsAreUnusable() throws IOException {
        FakeSysfs s = sysfs().device("rxe0", FakeSysfs.DOWN, "10.0.0.1");
        RdmaEnvironment env = RdmaEnvironment.discover(Map.of(), s.root());
        assertEquals(List.of("no RDMA device has an ACTIVE port; devices: [rxe0]"), env.problems());
    }

    @Test
    void aDeviceWithoutIpv4GidNeedsAnExplicitAddress() throws IOException {
        FakeSysfs s = sysfs().device("ib0dev", FakeSysfs.ACTIVE, null);
        RdmaEnvironment env = RdmaEnvironment.discover(Map.of(), s.root());
        assertEquals(2, env.problems().size(), env.problems().toString());
        assertTrue(env.problems().getFirst().contains("has no IPv4-mapped GID; set RDMARPC_ADDR0"), env.problems().toString());
    }

    @Test
    void ipv4MappedGidsParse() {
        assertEquals("198.18.0.1", RdmaEnvironment.ipv4Mapped("0000:0000:0000:0000:0000:ffff:c612:0001"));
        assertEquals("255.255.255.255", RdmaEnvironment.ipv4Mapped("0000:0000:0000:0000:0000:ffff:ffff:ffff"));
        assertNull(RdmaEnvironment.ipv4Mapped("fe80:0000:0000:0000:dc7f:d8ff:fecf:5fe4"));
        assertNull(RdmaEnvironment.ipv4Mapped("0000:0000:0000:0000:0000:0000:0000:0000"));
        assertNull(RdmaEnvironment.ipv4Mapped("0000:0000:0000:0000:0000:fffe:c612:0001"));
        assertNull(RdmaEnvironment.ipv4Mapped("garbage"));
        assertNull(RdmaEnvironment.ipv4Mapped("0000:0000:0000:0000:0000:ffff:zzzz:0001"));
    }
}
