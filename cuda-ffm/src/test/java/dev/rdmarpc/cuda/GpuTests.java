package dev.rdmarpc.cuda;

import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Skips a GPU test, with its reason, where there is no driver or no GPU. */
final class GpuTests {
    private GpuTests() {
    }

    /** @return GPU 0, or the test is skipped with "CUDA driver not found: ..." or "no CUDA device: ..." */
    static CudaDevice firstGpu() {
        assumeTrue(Cuda.isAvailable(), () -> Cuda.unavailabilityCause().getMessage());
        try {
            Cuda.init();
        } catch (CudaException e) {
            if ("CUDA_ERROR_NO_DEVICE".equals(e.errorName())) {
                abort("no CUDA device: " + e.getMessage());
            }
            throw e;
        }
        return CudaDevice.get(0);
    }
}
