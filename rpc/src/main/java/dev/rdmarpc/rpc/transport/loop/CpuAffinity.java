package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.PosixException;
import dev.rdmarpc.posix.ThreadAffinity;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The CPUs a thread may run on, through Linux's {@code sched_setaffinity(2)} and
 * {@code sched_getaffinity(2)} for the calling thread (pid 0), through
 * {@link dev.rdmarpc.posix.ThreadAffinity}.
 *
 * <p>An I/O thread that polls without sleeping (busy-poll, or the adaptive mode's spin) is worth a
 * core of its own: two spinning threads on one core take turns a time slice at a time. Pinning pays
 * where cores are spare. In the Soft-RoCE VM, whose 2 vCPUs carry both JVMs and rxe, pinning the I/O
 * threads alone did not shorten busy-poll's round trip, and pinning each whole JVM to a vCPU did
 * (docs/performance-archive.md, section 4).
 */
public final class CpuAffinity {
    /** CPUs a mask here can name: glibc's {@code CPU_SETSIZE}. */
    public static final int MAX_CPUS = ThreadAffinity.MAX_CPUS;

    private CpuAffinity() {
    }

    private static boolean isLinux() {
        return System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("linux");
    }

    /** @return whether this platform lets a thread be pinned here (Linux) */
    public static boolean isSupported() {
        return isLinux();
    }

    /**
     * Restricts the calling thread to {@code cpu}.
     *
     * @throws UnsupportedOperationException off Linux
     * @throws IllegalArgumentException      when {@code cpu} is outside [0, {@value #MAX_CPUS}) or the
     *                                       kernel refuses it (no such CPU, or outside the process's
     *                                       cpuset), with errno
     */
    public static void pinCurrentThread(int cpu) {
        requireSupported();
        if (cpu < 0 || cpu >= MAX_CPUS) {
            throw new IllegalArgumentException("CPU " + cpu + " is outside [0, " + MAX_CPUS + ")");
        }
        BitSet one = new BitSet();
        one.set(cpu);
        try {
            ThreadAffinity.set(one);
        } catch (PosixException e) {
            throw new IllegalArgumentException("sched_setaffinity(CPU " + cpu + ") failed, errno " + e.errno()
                    + (e.errno() == Posix.EINVAL ? " (EINVAL: no such CPU, or not one this process may use: " + currentThreadCpus() + ")" : ""), e);
        }
    }

    /**
     * @return the CPUs the calling thread may run on, ascending
     * @throws UnsupportedOperationException off Linux
     */
    public static List<Integer> currentThreadCpus() {
        requireSupported();
        BitSet set;
        try {
            set = ThreadAffinity.get();
        } catch (PosixException e) {
            throw new IllegalStateException("sched_getaffinity failed, errno " + e.errno(), e);
        }
        List<Integer> cpus = new ArrayList<>();
        for (int cpu = set.nextSetBit(0); cpu >= 0; cpu = set.nextSetBit(cpu + 1)) {
            cpus.add(cpu);
        }
        return cpus;
    }

    private static void requireSupported() {
        if (!isSupported()) {
            throw new UnsupportedOperationException("pinning a thread to a CPU needs Linux's sched_setaffinity (os.name "
                    + System.getProperty("os.name") + ")");
        }
    }
}
