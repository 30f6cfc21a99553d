package dev.rdmarpc.cuda;

import dev.rdmarpc.bindingcheck.RawBindings;
import dev.rdmarpc.bindingcheck.SymbolCheck;
import dev.rdmarpc.cuda.raw.cuda_h;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Every generated CUDA function resolves in the installed driver (where there is one). */
class CudaSymbolTest {

    @Test
    void everyGeneratedFunctionResolvesInLibcuda() {
        assumeTrue(Cuda.isAvailable(), "no CUDA driver here (" + Cuda.unavailabilityCause() + "): symbol check skipped");
        SymbolCheck.Report report = SymbolCheck.run(new RawBindings(cuda_h.class), Cuda.SONAME);
        System.out.println("cuda symbol check: " + report.functions() + " functions resolved in " + Cuda.SONAME);
        assertEquals(List.of(), report.unresolved());
        assertTrue(report.functions() >= 78, "functions: " + report.functions());
    }
}
