package dev.rdmarpc.cuda;

import dev.rdmarpc.bindingcheck.LayoutCheck;
import dev.rdmarpc.bindingcheck.RawBindings;
import dev.rdmarpc.cuda.raw.cuda_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The generated CUDA layouts against {@code cuda.h} as gcc sees it.
 *
 * <p>The raw classes load {@code libcuda.so.1} when initialised. Without a driver this test first
 * loads an empty stub library whose soname is {@code libcuda.so.1} (the dynamic linker then hands
 * it out for that name), so the layouts can be read; no function is called. {@link Cuda} has
 * settled that there is no driver before the stub is loaded ({@code Cuda.isAvailable()} is computed
 * once per JVM), so the other tests of this JVM still see "CUDA driver not found" and never call
 * into the stub.
 */
class CudaLayoutTest {

    private static Path cudaInclude() {
        String configured = System.getenv("CUDA_INCLUDE");
        return Stream.of(configured, "/usr/local/cuda-13.0/include", "/usr/local/cuda/include", "/usr/include")
                .filter(d -> d != null && Files.exists(Path.of(d, "cuda.h")))
                .map(Path::of).findFirst().orElse(null);
    }

    @Test
    void layoutsMatchTheCCompiler() throws Exception {
        assumeTrue(LayoutCheck.gcc().isPresent(), "gcc not on PATH: layout check skipped");
        Path include = cudaInclude();
        assumeTrue(include != null, "cuda.h not found (CUDA_INCLUDE, /usr/local/cuda*/include): layout check skipped");
        String header = Files.readString(include.resolve("cuda.h"));
        assumeTrue(header.contains("#define CUDA_VERSION 13000"),
                include + "/cuda.h is not CUDA 13.0, the version the bindings were generated from: skipped");
        if (!Cuda.isAvailable()) {
            loadStubDriver();
        }

        Path wrapper = RawBindings.nativeHeadersDir().resolve("cuda/cuda_driver.h");
        LayoutCheck.Report report = LayoutCheck.run(new RawBindings(cuda_h.class), wrapper, List.of(include),
                Path.of("target/layout-check"));
        System.out.println("cuda layout check (" + (Cuda.isAvailable() ? "real driver" : "stub driver") + "): "
                + report.summary());

        assertEquals(List.of(), report.mismatches(), report.summary());
        assertTrue(report.types() >= 10, report.summary());
        assertTrue(report.fields() >= 60, report.summary());
        assertTrue(report.scalarTypedefs() >= 5, report.summary());
    }

    private static void loadStubDriver() throws Exception {
        Path dir = Files.createDirectories(Path.of("target/layout-check").toAbsolutePath());
        Path src = dir.resolve("cuda_stub.c");
        Path lib = dir.resolve("libcuda-layout-stub.so");
        Files.writeString(src, "/* empty stand-in for libcuda.so.1: lets the raw classes initialise */\n"
                + "int rdmarpc_cuda_layout_stub;\n");
        Process gcc = new ProcessBuilder(LayoutCheck.gcc().orElseThrow().toString(), "-shared", "-fPIC",
                "-Wl,-soname,libcuda.so.1", "-o", lib.toString(), src.toString()).inheritIO().start();
        assertTrue(gcc.waitFor(60, TimeUnit.SECONDS) && gcc.exitValue() == 0, "building the stub failed");
        SymbolLookup.libraryLookup(lib, Arena.global());
    }
}
