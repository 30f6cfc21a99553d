package dev.rdmarpc.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** Without libcuda: one clear "CUDA driver not found" exception, from every entry point. */
class CudaDriverTest {

    @Test
    void withoutTheDriverEnsureAvailabilitySaysCudaDriverNotFound() {
        assumeFalse(Cuda.isAvailable(), "libcuda.so.1 is installed here: the no-driver behaviour is not observable");
        CudaDriverNotFoundException e = assertThrows(CudaDriverNotFoundException.class, Cuda::ensureAvailability);
        assertTrue(e.getMessage().startsWith("CUDA driver not found: libcuda.so.1 could not be loaded; it is installed"
                + " by the NVIDIA driver"), e.getMessage());
        assertEquals(-1, e.result());
        assertNull(e.errorName());
        assertTrue(e.getCause() instanceof IllegalArgumentException, String.valueOf(e.getCause()));
        assertSame(CudaDriverNotFoundException.class, Cuda.unavailabilityCause().getClass());
        // Every driver-backed entry point gives the same exception, never an ExceptionInInitializerError.
        assertThrows(CudaDriverNotFoundException.class, () -> Cuda.errorName(1));
        assertThrows(CudaDriverNotFoundException.class, () -> Cuda.check("cuInit", 100));
    }

    @Test
    void withoutTheDriverEveryEntryPointFailsTheSameWay() {
        assumeFalse(Cuda.isAvailable(), "libcuda.so.1 is installed here: the no-driver behaviour is not observable");
        List<Executable> entryPoints = List.of(Cuda::init, Cuda::driverVersion, CudaDevice::count,
                () -> CudaDevice.get(0), CudaDevice::all, () -> Cuda.errorString(2));
        for (int round = 0; round < 2; round++) { // the second round: nothing was left half-initialised
            for (Executable entry : entryPoints) {
                CudaDriverNotFoundException e = assertThrows(CudaDriverNotFoundException.class, entry);
                assertTrue(e.getMessage().startsWith("CUDA driver not found"), e.getMessage());
            }
        }
    }

    @Test
    void missingLibraryThroughTheSameLoader() {
        CudaDriverNotFoundException e = Cuda.probe("libcuda-does-not-exist.so.1");
        assertTrue(e.getMessage().startsWith("CUDA driver not found: libcuda-does-not-exist.so.1 could not be loaded"),
                e.getMessage());
        assertTrue(e.getMessage().contains("NVIDIA driver"), e.getMessage());
    }

    @Test
    void successNeedsNoDriver() {
        Cuda.check("cuInit", 0);
    }
}
