package dev.rdmarpc.rpc.transport.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.tcp.IoThreadCpusTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Pinning threads to CPUs (Linux): the kernel's own view of the mask, and the I/O loop's use of it. */
@Timeout(30)
class CpuAffinityTest {

    /** Runs {@code task} on a fresh thread (a pinned test thread would stay pinned for the next test). */
    private static <T> T onFreshThread(java.util.concurrent.Callable<T> task) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "cpu-affinity-test");
        t.start();
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    @Test
    void aThreadPinnedToEachAllowedCpuRunsThereAlone() throws Exception {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        assertFalse(allowed.isEmpty());
        for (int cpu : allowed) {
            String seen = onFreshThread(() -> {
                CpuAffinity.pinCurrentThread(cpu);
                assertEquals(List.of(cpu), CpuAffinity.currentThreadCpus());
                return IoThreadCpusTest.cpusAllowed(Path.of("/proc/thread-self/status"));
            });
            assertEquals(Integer.toString(cpu), seen, "the kernel's view after pinning to " + cpu);
        }
        // the caller's own mask is untouched
        assertEquals(allowed, CpuAffinity.currentThreadCpus());
    }

    @Test
    void aCpuTheProcessMayNotUseIsRefusedWithTheReason() throws Exception {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        int outside = CpuAffinity.MAX_CPUS - 1;
        assumeTrue(!allowed.contains(outside), "this machine may use CPU " + outside);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> onFreshThread(() -> {
                    CpuAffinity.pinCurrentThread(outside);
                    return null;
                }));
        assertTrue(e.getMessage().contains("errno 22"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CpuAffinity.pinCurrentThread(-1));
        assertThrows(IllegalArgumentException.class, () -> CpuAffinity.pinCurrentThread(CpuAffinity.MAX_CPUS));
        IllegalArgumentException check = assertThrows(IllegalArgumentException.class,
                () -> IoLoop.checkCpus(new int[]{allowed.get(0), outside}, "test.cpus"));
        assertTrue(check.getMessage().contains("test.cpus names CPU " + outside), check.getMessage());
        IoLoop.checkCpus(new int[0], "test.cpus");
        IoLoop.checkCpus(allowed.stream().mapToInt(Integer::intValue).toArray(), "test.cpus");
    }

    @Test
    void anIoLoopPinsItsThreadAsItStarts() throws Exception {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        int cpu = allowed.get(allowed.size() - 1);
        try (BufferPool pool = BufferPool.create(new BufferPool.Config().chunkSize(4096).slabSize(1 << 20)
                .maxPooledBytes(1 << 20))) {
            for (int pin : new int[]{cpu, -1}) {
                IoLoop loop = new IoLoop("cpu-affinity-loop", IdleStrategy.event(), Duration.ofMillis(10).toNanos(), pool);
                loop.pinTo(pin);
                loop.start(new IoLoopTest.CountingPoller());
                try {
                    CompletableFuture<List<Integer>> seen = new CompletableFuture<>();
                    loop.execute(() -> seen.complete(CpuAffinity.currentThreadCpus()));
                    assertEquals(pin >= 0 ? List.of(pin) : allowed, seen.get(10, TimeUnit.SECONDS), "pinned to " + pin);
                } finally {
                    loop.shutdown();
                    loop.join(5_000);
                }
            }
        }
    }
}
