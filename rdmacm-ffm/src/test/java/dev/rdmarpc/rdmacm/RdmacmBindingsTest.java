package dev.rdmarpc.rdmacm;

import dev.rdmarpc.bindingcheck.LayoutCheck;
import dev.rdmarpc.bindingcheck.RawBindings;
import dev.rdmarpc.bindingcheck.SymbolCheck;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The generated librdmacm bindings against the C headers (layouts) and the installed library (symbols). */
class RdmacmBindingsTest {
    private static final Path RDMA_CMA_H = Path.of("/usr/include/rdma/rdma_cma.h");

    @Test
    void layoutsMatchTheCCompiler() throws Exception {
        assumeTrue(LayoutCheck.gcc().isPresent(), "gcc not on PATH: layout check skipped");
        assumeTrue(Files.exists(RDMA_CMA_H), RDMA_CMA_H + " absent (install librdmacm-dev): layout check skipped");
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable: " + Rdmacm.unavailabilityCause());

        Path wrapper = RawBindings.nativeHeadersDir().resolve("rdmacm/rdmacm.h");
        LayoutCheck.Report report = LayoutCheck.run(new RawBindings(rdmacm_h.class), wrapper, List.of(),
                Path.of("target/layout-check"));
        System.out.println("rdmacm layout check: " + report.summary());

        assertEquals(List.of(), report.mismatches(), report.summary());
        // 10 rdma_* structs, the 3 verbs and 6 socket structs they embed.
        assertTrue(report.types() >= 19, report.summary());
        assertTrue(report.fields() >= 100, report.summary());
    }

    @Test
    void everyGeneratedFunctionResolvesInLibrdmacm() {
        assumeTrue(Rdmacm.isAvailable(), "librdmacm not loadable: " + Rdmacm.unavailabilityCause());
        SymbolCheck.Report report = SymbolCheck.run(new RawBindings(rdmacm_h.class), Rdmacm.SONAME);
        System.out.println("rdmacm symbol check: " + report.functions() + " functions resolved in " + Rdmacm.SONAME);
        assertEquals(List.of(), report.unresolved());
        assertTrue(report.functions() >= 40, "functions: " + report.functions());
    }
}
