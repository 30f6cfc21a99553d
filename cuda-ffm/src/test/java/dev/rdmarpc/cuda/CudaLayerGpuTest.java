package dev.rdmarpc.cuda;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The idiomatic CUDA layer on a real GPU: devices, primary context, device memory and copies, pinned
 * and registered host memory, streams and events, dma-buf export, errors. Skipped ("CUDA driver not
 * found: ...") without a driver.
 */
@Tag("gpu")
class CudaLayerGpuTest {
    private static final long MIB = 1 << 20;
    private static CudaDevice gpu;
    private static CudaContext ctx;

    @BeforeEach
    void open() { // per test, so that every test reports the skip and its reason
        gpu = GpuTests.firstGpu();
        if (ctx == null) {
            ctx = gpu.retainPrimaryContext();
        }
    }

    @AfterAll
    static void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private static void pattern(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
    }

    @Test
    void devicesDescribeThemselves() {
        List<CudaDevice> all = CudaDevice.all();
        assertEquals(CudaDevice.count(), all.size());
        for (CudaDevice d : all) {
            System.out.println(d + ", driver " + Cuda.driverVersion());
            assertFalse(d.name().isBlank());
            assertTrue(d.pciBusId().matches("[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9]"), d.pciBusId());
            assertTrue(d.totalMemory() > 0);
        }
        CudaException e = assertThrows(CudaException.class, () -> CudaDevice.get(all.size() + 1000));
        assertEquals("CUDA_ERROR_INVALID_DEVICE", e.errorName());
    }

    @Test
    void allocateAndCopyRoundTripHostDeviceDeviceHost() {
        try (Arena arena = Arena.ofConfined();
             DeviceBuffer a = ctx.allocate(4 * MIB);
             DeviceBuffer b = ctx.allocate(4 * MIB)) {
            MemorySegment host = arena.allocate(4 * MIB);
            pattern(host, 7);
            a.copyFromHost(host, 0);
            b.fill(0, b.byteSize(), (byte) 0);
            b.copyFromDevice(a, MIB, 0, 3 * MIB);
            MemorySegment back = arena.allocate(3 * MIB);
            b.copyToHost(0, back);
            assertEquals(-1, back.mismatch(host.asSlice(MIB, 3 * MIB)));
            MemorySegment tail = arena.allocate(MIB);
            b.copyToHost(3 * MIB, tail);
            for (long i = 0; i < MIB; i++) {
                assertEquals(0, tail.get(JAVA_BYTE, i));
            }
            PointerInfo info = ctx.pointerInfo(a.address() + 100);
            assertTrue(info.isDevice(), info.toString());
            assertEquals(gpu.ordinal(), info.deviceOrdinal());
            assertTrue(info.covers(4 * MIB - 100), info.toString());
            assertFalse(info.covers(4 * MIB - 99), info.toString());
            assertFalse(ctx.pointerInfo(host.address()).isDevice());
        }
    }

    @Test
    void badArgumentsGetClearErrorsBeforeTheDriver() {
        try (Arena arena = Arena.ofConfined(); DeviceBuffer a = ctx.allocate(MIB)) {
            assertThrows(IndexOutOfBoundsException.class, () -> a.copyFromHost(arena.allocate(MIB + 1), 0));
            assertThrows(IndexOutOfBoundsException.class, () -> a.copyToHost(1, arena.allocate(MIB)));
            IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                    () -> a.copyFromHost(MemorySegment.ofArray(new byte[16]), 0));
            assertTrue(heap.getMessage().contains("native"), heap.getMessage());
            assertThrows(IllegalArgumentException.class, () -> ctx.allocate(0));
        }
        CudaException oom = assertThrows(CudaException.class, () -> ctx.allocate(Long.MAX_VALUE / 2));
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", oom.errorName());
        assertTrue(oom.getMessage().startsWith("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): "), oom.getMessage());
    }

    @Test
    void pinnedAllocationAndRegistrationWithAsyncCopiesAndEventTiming() {
        try (Arena arena = Arena.ofConfined();
             PinnedHostMemory pinned = ctx.allocatePinned(8 * MIB);
             DeviceBuffer dev = ctx.allocate(8 * MIB);
             CudaStream stream = ctx.createStream();
             CudaEvent start = ctx.createEvent(true);
             CudaEvent end = ctx.createEvent(true)) {
            pattern(pinned.segment(), 3);
            MemorySegment plain = arena.allocate(8 * MIB, 4096);
            try (HostRegistration reg = ctx.register(plain)) {
                start.record(stream);
                dev.copyFromHostAsync(pinned.segment(), 0, stream);
                dev.copyToHostAsync(0, reg.segment(), stream);
                end.record(stream);
                end.synchronize();
                assertTrue(end.isComplete());
                assertTrue(stream.isIdle());
                float ms = CudaEvent.elapsedMillis(start, end);
                System.out.printf("8 MiB H2D + D2H through pinned memory on a stream: %.3f ms%n", ms);
                assertTrue(ms > 0, "elapsed " + ms);
                assertEquals(-1, plain.mismatch(pinned.segment()));
                CudaException twice = assertThrows(CudaException.class, () -> ctx.register(plain));
                assertEquals("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", twice.errorName());
            }
            try (HostRegistration again = ctx.register(plain)) { // unregistered by the close above
                assertFalse(again.isClosed());
            }
            try (CudaEvent plainEvent = ctx.createEvent(false)) {
                assertThrows(IllegalArgumentException.class, () -> CudaEvent.elapsedMillis(start, plainEvent));
            }
        }
    }

    @Test
    void pinnedSegmentIsUnusableAfterClose() {
        PinnedHostMemory pinned = ctx.allocatePinned(MIB);
        MemorySegment s = pinned.segment();
        s.set(JAVA_BYTE, 0, (byte) 1);
        pinned.close();
        pinned.close();
        assertThrows(IllegalStateException.class, () -> s.get(JAVA_BYTE, 0));
    }

    @Test
    void closingTheContextClosesWhatItMade() {
        CudaContext own = gpu.retainPrimaryContext();
        DeviceBuffer buf = own.allocate(MIB);
        CudaStream stream = own.createStream();
        CudaEvent event = own.createEvent(false);
        PinnedHostMemory pinned = own.allocatePinned(MIB);
        buf.close(); // closed early: the context must not close it again
        own.close();
        own.close();
        assertTrue(buf.isClosed() && stream.isClosed() && event.isClosed() && pinned.isClosed());
        assertThrows(IllegalStateException.class, () -> own.allocate(MIB));
        assertThrows(IllegalStateException.class, stream::synchronize);
        // the shared primary context is still retained by ctx
        try (DeviceBuffer still = ctx.allocate(MIB)) {
            still.fill(0, MIB, (byte) 5);
        }
    }

    @Test
    void dmaBufExportOfDeviceMemory() {
        System.out.println(gpu + ": dma-buf " + gpu.supportsDmaBuf() + ", GPUDirect RDMA " + gpu.supportsGpuDirectRdma());
        assumeTrue(gpu.supportsDmaBuf(), "GPU reports no dma-buf support");
        try (DeviceBuffer buf = ctx.allocate(4 * MIB)) {
            assumeTrue(buf.address() % DmaBuf.PAGE_SIZE == 0, "allocation not page aligned");
            try (DmaBuf dmaBuf = buf.exportDmaBuf()) {
                System.out.println("exported " + dmaBuf);
                assertTrue(dmaBuf.fd() >= 0);
                assertEquals(buf.address(), dmaBuf.address());
            }
            assertThrows(IllegalArgumentException.class, () -> ctx.exportDmaBuf(buf.address() + 1, DmaBuf.PAGE_SIZE));
        }
    }
}
