package dev.rdmarpc.posix;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ThreadAffinity} against the kernel's own view ({@code /proc/thread-self/status}). */
class ThreadAffinityTest {

    @Test
    void aMaskIsCpuSetsize() {
        assertEquals(1024, ThreadAffinity.MAX_CPUS);
    }

    @Test
    void getAgreesWithTheKernel() throws Exception {
        BitSet cpus = ThreadAffinity.get();
        assertFalse(cpus.isEmpty());
        assertEquals(kernelView(), cpus);
    }

    @Test
    void aThreadSetToEachAllowedCpuRunsThereAlone() throws Exception {
        BitSet allowed = ThreadAffinity.get();
        for (int cpu = allowed.nextSetBit(0); cpu >= 0; cpu = allowed.nextSetBit(cpu + 1)) {
            BitSet one = new BitSet();
            one.set(cpu);
            BitSet[] seen = CompletableFuture.supplyAsync(() -> {
                ThreadAffinity.set(one);
                try {
                    return new BitSet[] {ThreadAffinity.get(), kernelView()};
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, r -> new Thread(r).start()).get(10, TimeUnit.SECONDS);
            assertEquals(one, seen[0]);
            assertEquals(one, seen[1], "the kernel's view after setting " + one);
        }
        assertEquals(allowed, ThreadAffinity.get(), "other threads keep their set");
    }

    @Test
    void aSetTheKernelRefusesFailsWithEinval() {
        BitSet allowed = ThreadAffinity.get();
        int outside = allowed.previousClearBit(ThreadAffinity.MAX_CPUS - 1);
        BitSet refused = new BitSet();
        refused.set(outside);
        PosixException e = assertThrows(PosixException.class, () -> ThreadAffinity.set(refused));
        assertEquals(Posix.EINVAL, e.errno());
        assertTrue(e.getMessage().startsWith("sched_setaffinity({" + outside + "}) failed: Invalid argument"), e.getMessage());
        assertEquals(allowed, ThreadAffinity.get(), "a refused set changes nothing");
    }

    @Test
    void emptyAndOutOfRangeSetsAreRefusedBeforeTheCall() {
        assertThrows(IllegalArgumentException.class, () -> ThreadAffinity.set(new BitSet()));
        BitSet tooHigh = new BitSet();
        tooHigh.set(ThreadAffinity.MAX_CPUS);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ThreadAffinity.set(tooHigh));
        assertTrue(e.getMessage().contains("CPU 1024 is outside [0, 1024)"), e.getMessage());
    }

    /** Cpus_allowed_list of the calling thread, e.g. "0-3,6". */
    private static BitSet kernelView() throws Exception {
        String list = Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
                .filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow()
                .substring("Cpus_allowed_list:".length()).trim();
        BitSet cpus = new BitSet();
        for (String range : list.split(",")) {
            String[] ends = range.split("-");
            int from = Integer.parseInt(ends[0]);
            int to = ends.length > 1 ? Integer.parseInt(ends[1]) : from;
            cpus.set(from, to + 1);
        }
        return cpus;
    }
}
