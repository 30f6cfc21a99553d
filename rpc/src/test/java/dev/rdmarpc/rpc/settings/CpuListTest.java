package dev.rdmarpc.rpc.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.transport.loop.CpuAffinity;
import org.junit.jupiter.api.Test;

class CpuListTest {
    @Test
    void aListHoldsTheCpusAnAffinityMaskNames() {
        // CpuList keeps its own bound so that settings depends on no transport class; the two must agree.
        assertEquals(CpuAffinity.MAX_CPUS, CpuList.MAX);
        assertEquals(CpuList.MAX - 1, CpuList.parse((CpuList.MAX - 1) + "").cpuOf(0));
    }
}
