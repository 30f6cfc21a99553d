package dev.rdmarpc.rpc.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequest;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;
import dev.rdmarpc.ibverbs.raw.ibv_sge;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The RDMA seam's GPU buffer pool over fake GPU memory and a fake NIC. */
class GpuBufferPoolTest {
    private static final int MIB = 1 << 20;
    private final Fakes.Journal journal = new Fakes.Journal();
    private final Fakes.Nic nic = new Fakes.Nic(journal);
    private final Fakes.Log log = new Fakes.Log();
    private Fakes.Memory memory;

    @AfterEach
    void free() {
        if (memory != null) {
            memory.close();
        }
    }

    private GpuBufferPool pool(GpuFacts facts, int maxSlabs) {
        memory = new Fakes.Memory(journal, facts);
        return GpuBufferPool.create(memory, nic,
                new GpuBufferPool.Config().slabSize(4 * MIB).bufferSize(MIB).maxSlabs(maxSlabs), log);
    }

    @Test
    void dmaBufPoolHandsOutRegisteredGpuBuffersUntilExhausted() {
        try (GpuBufferPool pool = pool(new GpuFacts(0, true, true, null), 2)) {
            assertEquals(GpuDirectMode.DMABUF, pool.decision().mode());
            assertTrue(log.lines().get(0).startsWith("INFO GPU buffer pool: GPU 0 -> fake_nic0: dmabuf"), log.lines().toString());
            List<GpuBuffer> held = new ArrayList<>();
            Set<Long> addresses = new HashSet<>();
            for (int i = 0; i < 8; i++) {
                GpuBuffer b = pool.acquire();
                held.add(b);
                assertTrue(addresses.add(b.deviceAddress()));
                assertEquals(b.deviceAddress(), b.nicAddress(), "the NIC reaches GPU memory itself");
                assertEquals(MemorySegment.NULL, b.hostStaging());
                assertEquals(MIB, b.capacity());
                assertEquals(GpuDirectMode.DMABUF, b.mode());
            }
            assertEquals(2, pool.slabCount());
            assertNull(pool.acquire(), "two slabs of four buffers: exhausted");
            assertEquals(8, pool.buffersInUse());
            assertNotEquals(held.get(0).lkey(), held.get(4).lkey(), "each slab its own region");
            GpuBuffer back = held.get(3);
            back.release();
            assertSame(back, pool.acquire(), "a released buffer is reused");
            back.release();
            assertThrows(IllegalStateException.class, back::release);
            assertEquals(2, journal.events().stream().filter(e -> e.startsWith("reg dmabuf")).count());
            assertEquals(0, memory.exporter.open, "every exported fd closed");
        }
        assertEquals(0, nic.open, "every region deregistered");
        assertTrue(memory.device.isEmpty(), "all GPU memory freed");
    }

    @Test
    void closeDeregistersEachSlabBeforeFreeingItsMemory() {
        GpuBufferPool pool = pool(new GpuFacts(0, true, true, null), 3);
        for (int i = 0; i < 9; i++) {
            pool.acquire();
        }
        pool.close();
        pool.close();
        List<String> ev = journal.events();
        for (String e : ev) {
            if (e.startsWith("free device ")) {
                String addr = e.substring("free device ".length());
                int freed = ev.indexOf(e);
                int dereg = ev.indexOf("dereg dmabuf " + addr);
                assertTrue(dereg >= 0 && dereg < freed, "deregistered before freed: " + ev);
            }
        }
        assertEquals(3, ev.stream().filter(e -> e.startsWith("free device")).count());
        assertThrows(IllegalStateException.class, pool::acquire);
    }

    @Test
    void peerMemoryPoolRegistersDeviceAddresses() {
        try (GpuBufferPool pool = pool(new GpuFacts(0, false, true, "nvidia_peermem"), 1)) {
            assertEquals(GpuDirectMode.PEER_MEMORY, pool.decision().mode());
            GpuBuffer b = pool.acquire();
            assertEquals(b.deviceAddress(), b.nicAddress());
            assertTrue(journal.events().stream().anyMatch(e -> e.startsWith("reg mr 0x")));
        }
    }

    @Test
    void stagedPoolPairsEveryGpuBufferWithRegisteredPinnedHostMemory() {
        nic.memoryRefused = a -> memory.device.containsKey(a); // device memory refused, host memory fine
        try (GpuBufferPool pool = pool(new GpuFacts(0, false, true, null), 2)) {
            assertEquals(GpuDirectMode.STAGED, pool.decision().mode());
            assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("WARNING GPU 0 memory cannot be registered")),
                    log.lines().toString());
            GpuBuffer a = pool.acquire();
            GpuBuffer b = pool.acquire();
            assertEquals(MIB, a.hostStaging().byteSize());
            assertEquals(a.hostStaging().address(), a.nicAddress(), "the NIC reaches the staging memory");
            assertEquals(a.hostStaging().address() + MIB, b.hostStaging().address());
            assertEquals(b.deviceAddress() - a.deviceAddress(), MIB);
            assertTrue(journal.events().contains("reg mr 0x" + Long.toHexString(a.hostStaging().address()) + " len " + 4 * MIB));
        }
        assertTrue(memory.host.isEmpty() && memory.device.isEmpty(), journal.events().toString());
        assertEquals(0, nic.open);
    }

    @Test
    void aSlabThatCannotBeAllocatedIsExhaustionNotAnError() {
        try (GpuBufferPool pool = pool(new GpuFacts(0, true, true, null), 4)) {
            memory.maxDeviceAllocations = 1;
            for (int i = 0; i < 4; i++) {
                pool.acquire();
            }
            assertNull(pool.acquire());
            assertEquals(1, pool.slabCount());
            assertTrue(log.lines().stream().anyMatch(l -> l.contains("could not add a slab")), log.lines().toString());
        }
    }

    @Test
    void badSettingsAreRefusedWithTheirName() {
        assertThrows(IllegalArgumentException.class, () -> new GpuBufferPool.Config().bufferSize(1000).conclude());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GpuBufferPool.Config().slabSize(3 * MIB).bufferSize(MIB).conclude());
        assertTrue(e.getMessage().startsWith("slabSize"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new GpuBufferPool.Config().maxSlabs(0).conclude());
        assertThrows(IllegalArgumentException.class, () -> new GpuBufferPool.Config().access(2).conclude());
    }

    @Test
    void headersInHostMemoryAttachmentOnTheGpuAsTwoSges() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not installed: " + Ibverbs.unavailabilityCause());
        assertEquals(ibverbs_h.IBV_ACCESS_LOCAL_WRITE(), GpuBufferPool.ACCESS_LOCAL_WRITE);
        assertEquals(ibverbs_h.IBV_ACCESS_REMOTE_WRITE(), GpuBufferPool.ACCESS_REMOTE_WRITE);
        assertEquals(ibverbs_h.IBV_ACCESS_REMOTE_READ(), GpuBufferPool.ACCESS_REMOTE_READ);
        try (GpuBufferPool pool = pool(new GpuFacts(0, true, true, null), 1); SendWorkRequests wrs = new SendWorkRequests(2, 2)) {
            GpuBuffer b = pool.acquire();
            SendWorkRequest wr = wrs.get(1).clear();
            assertSame(wr, b.writeSges(wr, 0x1000, 32 + 100, 0x77, 4096));
            MemorySegment sent = ibv_send_wr.asSlice(wrs.segment(), 1);
            assertEquals(2, ibv_send_wr.num_sge(sent));
            MemorySegment sges = ibv_send_wr.sg_list(sent).reinterpret(2 * ibv_sge.sizeof());
            MemorySegment first = ibv_sge.asSlice(sges, 0);
            MemorySegment second = ibv_sge.asSlice(sges, 1);
            assertEquals(0x1000, ibv_sge.addr(first));
            assertEquals(132, ibv_sge.length(first));
            assertEquals(0x77, ibv_sge.lkey(first));
            assertEquals(b.deviceAddress(), ibv_sge.addr(second));
            assertEquals(4096, ibv_sge.length(second));
            assertEquals(b.lkey(), ibv_sge.lkey(second));
            assertThrows(IndexOutOfBoundsException.class, () -> b.writeSges(wr, 0, 1, 1, MIB + 1));
            try (SendWorkRequests oneSge = new SendWorkRequests(1, 1)) {
                assertThrows(IndexOutOfBoundsException.class, () -> b.writeSges(oneSge.get(0), 0, 1, 1, 1),
                        "a batch without room for the attachment's SGE");
            }
        }
    }
}
