package dev.rdmarpc.rpc.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every branch of the GPU-direct registration decision, with a fake GPU and NIC. */
class GpuDirectSelectorTest {
    private static final long ADDR = 0x7f00_0020_0000L;
    private static final long LEN = 2L << 20;
    private static final int ACCESS = 7;

    private final Fakes.Journal journal = new Fakes.Journal();
    private final Fakes.Nic nic = new Fakes.Nic(journal);
    private final Fakes.Exporter exporter = new Fakes.Exporter(journal);
    private final Fakes.Log log = new Fakes.Log();

    private GpuDirectSelector.Selection select(GpuFacts facts, long address, long length) {
        return GpuDirectSelector.select(facts, address, length, ACCESS, exporter, nic, log);
    }

    @Test
    void dmaBufFirstWhenTheGpuSupportsIt() {
        GpuDirectSelector.Selection s = select(new GpuFacts(0, true, true, "nvidia_peermem"), ADDR, LEN);
        assertEquals(GpuDirectMode.DMABUF, s.decision().mode());
        assertEquals("dmabuf", s.decision().mode().label());
        assertTrue(s.decision().isDirect());
        assertEquals(List.of(), s.decision().attempts());
        assertNotNull(s.registration());
        assertEquals(List.of("export fd 40 0x" + Long.toHexString(ADDR),
                "reg dmabuf fd 40 iova 0x" + Long.toHexString(ADDR) + " len " + LEN + " access 7",
                "close fd 40"), journal.events(), "registered at the device address, then the fd closed");
        assertEquals(0, exporter.open);
        assertEquals(List.of(), log.lines(), "nothing to warn about");
        assertEquals("GPU 0 -> fake_nic0: dmabuf (ibv_reg_dmabuf_mr of a dma-buf from cuMemGetHandleForAddressRange)",
                s.decision().describe());
    }

    @Test
    void peerMemoryWhenTheGpuHasNoDmaBuf() {
        GpuDirectSelector.Selection s = select(new GpuFacts(1, false, true, "nvidia_peermem"), ADDR, LEN);
        assertEquals(GpuDirectMode.PEER_MEMORY, s.decision().mode());
        assertEquals(List.of("dmabuf: GPU 1 reports no dma-buf support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0)"),
                s.decision().attempts());
        assertTrue(s.decision().reason().contains("nvidia_peermem"), s.decision().reason());
        assertEquals(List.of("reg mr 0x" + Long.toHexString(ADDR) + " len " + LEN), journal.events());
    }

    @Test
    void peerMemoryWhenTheExportFailsAndTheDriversWordsAreKept() {
        exporter.failure = new IllegalStateException(
                "cuMemGetHandleForAddressRange failed: CUDA_ERROR_NOT_SUPPORTED (801): operation not supported");
        GpuDirectSelector.Selection s = select(new GpuFacts(0, true, true, null), ADDR, LEN);
        assertEquals(GpuDirectMode.PEER_MEMORY, s.decision().mode());
        assertEquals(List.of("dmabuf: cuMemGetHandleForAddressRange failed: CUDA_ERROR_NOT_SUPPORTED (801): operation not supported"),
                s.decision().attempts());
    }

    @Test
    void aRefusedDmaBufRegistrationStillClosesTheFd() {
        nic.dmaBufFailure = new IllegalStateException("ibv_reg_dmabuf_mr failed: Operation not supported (errno 95)");
        GpuDirectSelector.Selection s = select(new GpuFacts(0, true, true, "nvidia_peermem"), ADDR, LEN);
        assertEquals(GpuDirectMode.PEER_MEMORY, s.decision().mode());
        assertEquals(0, exporter.open, "exported fd closed after the failed registration");
        assertTrue(journal.events().contains("close fd 40"), journal.events().toString());
        assertEquals("dmabuf: ibv_reg_dmabuf_mr failed: Operation not supported (errno 95)", s.decision().attempts().get(0));
    }

    @Test
    void anOldLibibverbsWithoutTheSymbolCountsAsAFailedAttempt() {
        nic.dmaBufLinkageError = new UnsatisfiedLinkError("unresolved symbol: ibv_reg_dmabuf_mr");
        GpuDirectSelector.Selection s = select(new GpuFacts(0, true, true, "nvidia_peermem"), ADDR, LEN);
        assertEquals(GpuDirectMode.PEER_MEMORY, s.decision().mode());
        assertEquals("dmabuf: unresolved symbol: ibv_reg_dmabuf_mr", s.decision().attempts().get(0));
    }

    @Test
    void unalignedRangesSkipDmaBuf() {
        GpuDirectSelector.Selection s = select(new GpuFacts(0, true, true, "nvidia_peermem"), ADDR + 256, LEN);
        assertEquals(GpuDirectMode.PEER_MEMORY, s.decision().mode());
        assertTrue(s.decision().attempts().get(0).startsWith("dmabuf: [0x"), s.decision().attempts().toString());
        assertTrue(s.decision().attempts().get(0).contains("not aligned"), s.decision().attempts().toString());
        assertFalse(journal.events().stream().anyMatch(e -> e.startsWith("export")), "nothing exported");
    }

    @Test
    void stagedWithALogLineWhenNeitherWorks() {
        nic.memoryRefused = a -> true;
        GpuDirectSelector.Selection s = select(new GpuFacts(2, false, true, null), ADDR, LEN);
        assertEquals(GpuDirectMode.STAGED, s.decision().mode());
        assertFalse(s.decision().isDirect());
        assertNull(s.registration());
        assertEquals(List.of(
                "dmabuf: GPU 2 reports no dma-buf support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0)",
                "peer-memory: ibv_reg_mr failed: Bad address (errno 14) (no peer-memory kernel module is loaded: modprobe nvidia_peermem)"),
                s.decision().attempts());
        assertEquals(String.join("; ", s.decision().attempts()), s.decision().reason());
        assertEquals(1, log.lines().size(), log.lines().toString());
        String line = log.lines().get(0);
        assertTrue(line.startsWith("WARNING GPU 2 memory cannot be registered with fake_nic0 for GPUDirect RDMA, so GPU"
                + " attachments are staged through pinned host memory: dmabuf: GPU 2 reports no dma-buf"), line);
    }

    @Test
    void stagedWithoutTryingPeerMemoryWhenTheGpuHasNoGpuDirectRdma() {
        GpuDirectSelector.Selection s = select(new GpuFacts(0, false, false, null), ADDR, LEN);
        assertEquals(GpuDirectMode.STAGED, s.decision().mode());
        assertEquals("peer-memory: GPU 0 reports no GPUDirect RDMA support (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0)",
                s.decision().attempts().get(1));
        assertEquals(List.of(), journal.events(), "no registration attempted");
        assertEquals(1, log.lines().size());
    }

    @Test
    void peerMemoryModuleFoundInSysModule(@TempDir Path sys) throws Exception {
        assertNull(GpuFacts.loadedPeerMemoryModule(sys));
        Files.createDirectory(sys.resolve("nv_peer_mem"));
        assertEquals("nv_peer_mem", GpuFacts.loadedPeerMemoryModule(sys));
        Files.createDirectory(sys.resolve("nvidia_peermem"));
        assertEquals("nvidia_peermem", GpuFacts.loadedPeerMemoryModule(sys), "the newer module first");
    }
}
