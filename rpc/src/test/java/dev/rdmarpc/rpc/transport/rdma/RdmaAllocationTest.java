package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.testsupport.RdmaTest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The MemorySegment call path over RDMA allocates nothing per call in steady state, on the RDMA I/O
 * threads of both sides: {@link AllocationMain} reads each thread's allocated-bytes counter
 * ({@code com.sun.management.ThreadMXBean}) around 100,000 pipelined round trips driven from the
 * client's I/O thread, in a child JVM with the full JIT (the VM's test JVMs run C1 only, which does
 * no escape analysis). This checks allocation, not speed.
 */
@RdmaTest
@Timeout(900)
class RdmaAllocationTest {

    @Test
    void memorySegmentCallPathAllocatesNothingPerCallOverRdma() throws Exception {
        Process p = ChildJvm.command(List.of("-XX:+UseSerialGC", "-Xmx256m"), AllocationMain.class,
                RdmaTestEnv.serverAddress(), "150000", "50000").start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the measuring JVM did not end");
        System.out.print(out);
        assertEquals(0, p.exitValue(), out);
        String line = out.lines().filter(l -> l.startsWith("ALLOC ")).findFirst().orElse(null);
        assertNotNull(line, out);
        String[] f = line.split(" ");
        long bytes = Long.parseLong(f[1]);
        long calls = Long.parseLong(f[2]);
        double perCall = bytes / (double) calls;
        System.out.printf("allocation over RDMA: %d bytes on the two RDMA I/O threads over %d calls (the least of three"
                + " windows) = %.3f B/call%n",
                bytes, calls, perCall);
        assertTrue(perCall < 1.0, "expected ~0 B/call on the RDMA I/O threads, got " + perCall);
    }
}
