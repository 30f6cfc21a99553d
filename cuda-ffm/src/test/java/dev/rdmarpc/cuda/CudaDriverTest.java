package dev.rdmarpc.cuda;

import org.junit.jupiter.api.Test;

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
