package dev.rdmarpc.ibverbs;

import dev.rdmarpc.bindingcheck.LayoutCheck;
import dev.rdmarpc.bindingcheck.RawBindings;
import dev.rdmarpc.bindingcheck.SymbolCheck;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The generated libibverbs bindings against the C headers (layouts) and the installed library (symbols). */
class IbverbsBindingsTest {
    private static final Path VERBS_H = Path.of("/usr/include/infiniband/verbs.h");

    @Test
    void layoutsMatchTheCCompiler() throws Exception {
        assumeTrue(LayoutCheck.gcc().isPresent(), "gcc not on PATH: layout check skipped");
        assumeTrue(Files.exists(VERBS_H), VERBS_H + " absent (install libibverbs-dev): layout check skipped");
        // The raw classes load libibverbs when initialised.
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable: " + Ibverbs.unavailabilityCause());

        Path wrapper = RawBindings.nativeHeadersDir().resolve("ibverbs/ibverbs.h");
        LayoutCheck.Report report = LayoutCheck.run(new RawBindings(ibverbs_h.class), wrapper, List.of(),
                Path.of("target/layout-check"));
        System.out.println("ibverbs layout check: " + report.summary());

        assertEquals(List.of(), report.mismatches(), report.summary());
        // verbs.h declares ~100 structs; all of them are generated and compared.
        assertTrue(report.types() >= 100, report.summary());
        assertTrue(report.fields() >= 1000, report.summary());
    }

    @Test
    void everyGeneratedFunctionResolvesInLibibverbs() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable: " + Ibverbs.unavailabilityCause());
        SymbolCheck.Report report = SymbolCheck.run(new RawBindings(ibverbs_h.class), Ibverbs.SONAME);
        System.out.println("ibverbs symbol check: " + report.functions() + " functions resolved in " + Ibverbs.SONAME);
        assertEquals(List.of(), report.unresolved());
        assertTrue(report.functions() >= 60, "functions: " + report.functions());
    }
}
