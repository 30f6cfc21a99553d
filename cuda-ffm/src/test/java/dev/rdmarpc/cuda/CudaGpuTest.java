package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The raw CUDA bindings on a real GPU: primary context, memory, copies, errors, dma-buf export. */
@Tag("gpu")
class CudaGpuTest {
    private static int device;
    private static boolean ready;

    @BeforeEach
    void init() { // per test, so that every test reports the skip and its reason
        assumeTrue(Cuda.isAvailable(), () -> Cuda.unavailabilityCause().getMessage());
        if (ready) {
            return;
        }
        int rc = cuda_h.cuInit(0);
        assumeTrue(rc != cuda_h.CUDA_ERROR_NO_DEVICE(), "CUDA driver without a device");
        Cuda.check("cuInit", rc);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = arena.allocate(JAVA_INT);
            Cuda.check("cuDriverGetVersion", cuda_h.cuDriverGetVersion(n));
            System.out.println("CUDA driver version " + n.get(JAVA_INT, 0));
            Cuda.check("cuDeviceGetCount", cuda_h.cuDeviceGetCount(n));
            assertTrue(n.get(JAVA_INT, 0) > 0);
            Cuda.check("cuDeviceGet", cuda_h.cuDeviceGet(n, 0));
            device = n.get(JAVA_INT, 0);
            MemorySegment ctx = arena.allocate(ADDRESS);
            Cuda.check("cuDevicePrimaryCtxRetain", cuda_h.cuDevicePrimaryCtxRetain(ctx, device));
            Cuda.check("cuCtxSetCurrent", cuda_h.cuCtxSetCurrent(ctx.get(ADDRESS, 0)));
        }
        ready = true;
    }

    @Test
    void driverErrorsCarryTheDriversName() {
        try (Arena arena = Arena.ofConfined()) {
            int rc = cuda_h.cuDeviceGet(arena.allocate(JAVA_INT), 1 << 20);
            CudaException e = assertThrows(CudaException.class, () -> Cuda.check("cuDeviceGet", rc));
            assertEquals(cuda_h.CUDA_ERROR_INVALID_DEVICE(), e.result());
            assertEquals("CUDA_ERROR_INVALID_DEVICE", e.errorName());
            assertTrue(e.getMessage().startsWith("cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE (101)"), e.getMessage());
        }
    }

    @Test
    void allocCopyRoundTripAndPointerAttributes() {
        long size = 1 << 20;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dptr = arena.allocate(JAVA_LONG);
            Cuda.check("cuMemAlloc_v2", cuda_h.cuMemAlloc_v2(dptr, size));
            long d = dptr.get(JAVA_LONG, 0);
            try {
                MemorySegment host = arena.allocate(size);
                for (long i = 0; i < size; i++) {
                    host.set(JAVA_BYTE, i, (byte) (i * 31));
                }
                Cuda.check("cuMemcpyHtoD_v2", cuda_h.cuMemcpyHtoD_v2(d, host, size));
                MemorySegment back = arena.allocate(size);
                Cuda.check("cuMemcpyDtoH_v2", cuda_h.cuMemcpyDtoH_v2(back, d, size));
                assertEquals(-1, host.mismatch(back));

                MemorySegment type = arena.allocate(JAVA_INT);
                Cuda.check("cuPointerGetAttribute",
                        cuda_h.cuPointerGetAttribute(type, cuda_h.CU_POINTER_ATTRIBUTE_MEMORY_TYPE(), d));
                assertEquals(cuda_h.CU_MEMORYTYPE_DEVICE(), type.get(JAVA_INT, 0));

                MemorySegment supported = arena.allocate(JAVA_INT);
                Cuda.check("cuDeviceGetAttribute", cuda_h.cuDeviceGetAttribute(supported,
                        cuda_h.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED(), device));
                if (supported.get(JAVA_INT, 0) != 0) {
                    MemorySegment fd = arena.allocate(JAVA_INT);
                    Cuda.check("cuMemGetHandleForAddressRange", cuda_h.cuMemGetHandleForAddressRange(fd, d, size,
                            cuda_h.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD(), 0L));
                    System.out.println("dma-buf fd " + fd.get(JAVA_INT, 0) + " for " + size + " bytes of device memory");
                    assertTrue(fd.get(JAVA_INT, 0) >= 0);
                    close(fd.get(JAVA_INT, 0));
                } else {
                    System.out.println("device reports no dma-buf support");
                }
            } finally {
                Cuda.check("cuMemFree_v2", cuda_h.cuMemFree_v2(d));
            }
        }
    }

    private static void close(int fd) {
        Linker linker = Linker.nativeLinker();
        MethodHandle close = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        try {
            assertEquals(0, (int) close.invokeExact(fd));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
