package dev.rdmarpc.posix;

import dev.rdmarpc.bindingcheck.LayoutCheck;
import dev.rdmarpc.bindingcheck.RawBindings;
import dev.rdmarpc.bindingcheck.SymbolCheck;
import dev.rdmarpc.posix.raw.cpu_set_t;
import dev.rdmarpc.posix.raw.posix_h;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The generated C library bindings against gcc's view of the same header and the C library's symbols. */
class PosixBindingsTest {

    @Test
    void layoutsMatchTheCCompiler() throws Exception {
        assumeTrue(LayoutCheck.gcc().isPresent(), "gcc not on PATH: layout check skipped");
        Path wrapper = RawBindings.nativeHeadersDir().resolve("posix/posix.h");
        LayoutCheck.Report report = LayoutCheck.run(new RawBindings(posix_h.class), wrapper, List.of(),
                Path.of("target/layout-check"));
        System.out.println("posix layout check: " + report.summary());
        assertEquals(List.of(), report.mismatches(), report.summary());
        // pollfd, cpu_set_t, in_addr, in6_addr, sockaddr_in, sockaddr_in6, sockaddr_storage, epoll_event (packed), epoll_data
        assertTrue(report.types() >= 9, "struct pollfd, cpu_set_t, the socket addresses and epoll's: " + report.summary());
        assertEquals(12, dev.rdmarpc.posix.raw.epoll_event.sizeof(), "sizeof(struct epoll_event): packed on x86-64");
        assertTrue(report.fields() >= 4, report.summary());
        assertEquals(128, cpu_set_t.sizeof(), "sizeof(cpu_set_t): CPU_SETSIZE 1024 bits");
    }

    @Test
    void everyGeneratedFunctionResolvesInLibc() {
        SymbolCheck.Report report = SymbolCheck.run(new RawBindings(posix_h.class), "libc.so.6");
        System.out.println("posix symbol check: " + report.functions() + " functions resolved in libc.so.6");
        assertEquals(List.of(), report.unresolved());
        // the 26 functions of native-headers/posix/jextract.args; the variadic fcntl, a class of its own
        // without a name$address() method, is checked by hand
        assertEquals(25, report.functions(), "functions with name$address()");
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            assertEquals(java.lang.foreign.SymbolLookup.libraryLookup("libc.so.6", arena).find("fcntl").orElseThrow().address(),
                    posix_h.fcntl.address().address(), "fcntl");
        }
    }
}
