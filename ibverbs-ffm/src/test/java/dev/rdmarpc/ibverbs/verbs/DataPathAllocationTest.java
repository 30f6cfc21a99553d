package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The posting and polling path of the verbs layer allocates nothing, measured with
 * {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes} over many iterations: fill
 * a send and a receive entry through the flyweights, link, call the provider entry points (here libc's
 * {@code getpid}, which ignores the arguments, standing in for the provider's post/poll functions),
 * read a completion through {@link WorkCompletions}. The same path with a real device is measured by
 * {@code VerbsRdmaTest} in the Soft-RoCE VM and by JMH {@code -prof gc} in bench-cli.
 */
class DataPathAllocationTest {
    @BeforeAll
    static void library() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
    }

    private static Object threads;
    private static Method allocated;

    /**
     * This thread's allocated bytes, through reflection: the module does not read java.management
     * (production code has no use for it), and the tests are patched into the module.
     */
    static long allocatedBytes() {
        try {
            if (allocated == null) {
                threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
                allocated = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
            }
            return (long) allocated.invoke(threads);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("com.sun.management.ThreadMXBean not available", e);
        }
    }

    @Test
    void fillLinkPostPollAndReadAllocateNothing() {
        MemorySegment fn = Linker.nativeLinker().defaultLookup().find("getpid").orElseThrow();
        try (Arena arena = Arena.ofConfined();
             SendWorkRequests sends = new SendWorkRequests(4, 2);
             ReceiveWorkRequests recvs = new ReceiveWorkRequests(4, 1);
             WorkCompletions wc = new WorkCompletions(16)) {
            MemorySegment buffer = arena.allocate(4096);
            long address = buffer.address();
            int iterations = 200_000;
            long best = Long.MAX_VALUE;
            long sink = 0;
            for (int round = 0; round < 40 && best >= 256; round++) {
                long before = allocatedBytes();
                for (int i = 0; i < iterations; i++) {
                    sends.get(0).clear().wrId(i).opcode(SendOpcode.SEND_WITH_IMM).immData(i)
                            .sge(0, address, 64, 1).sge(1, address + 64, 64, 1).sgeCount(2).signaled(true);
                    sends.get(1).clear().wrId(i + 1).opcode(SendOpcode.RDMA_WRITE).remote(address, 2)
                            .sge(0, address, 128, 1).sgeCount(1).inline(true);
                    sink += DataPath.post(fn, 1, sends.link(0, 2), sends.badWrAddress());
                    recvs.get(0).wrId(i).sge(0, address, 4096, 1).sgeCount(1);
                    sink += DataPath.post(fn, 1, recvs.link(0, 1), recvs.badWrAddress());
                    sink += DataPath.pollCq(fn, 1, 16, wc.pollAddress(16));
                    sink += DataPath.reqNotifyCq(fn, 1, 0);
                    sink += wc.wrId(3) + wc.byteLength(3) + wc.status(3).ordinal() + wc.opcode(3).ordinal()
                            + wc.immData(3) + sends.failedIndex();
                }
                best = Math.min(best, allocatedBytes() - before);
            }
            System.out.println("verbs data path: " + best + " bytes allocated for " + iterations
                    + " fill+post+poll rounds (best round)");
            assertNotEquals(0, sink);
            // One object per round would be >= 3 MB here; the measurement itself boxes a long (rounds stop below 256 B).
            assertTrue(best < 1024, best + " bytes allocated by " + iterations + " rounds");
        }
    }
}
