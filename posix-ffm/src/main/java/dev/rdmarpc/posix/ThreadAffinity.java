package dev.rdmarpc.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.BitSet;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CPUs the calling thread may run on: Linux's {@code sched_setaffinity(2)} and
 * {@code sched_getaffinity(2)} for the calling thread (pid 0), with a {@code cpu_set_t} mask.
 */
public final class ThreadAffinity {
    /** CPUs a mask can name: {@code 8 * sizeof(cpu_set_t)}, glibc's {@code CPU_SETSIZE} (1024). */
    public static final int MAX_CPUS = (int) (Posix.cpuSetBytes() * 8);

    private ThreadAffinity() {
    }

    /**
     * Restricts the calling thread to {@code cpus}.
     *
     * @throws IllegalArgumentException when {@code cpus} is empty or names a CPU at or above
     *                                  {@value #MAX_CPUS}
     * @throws PosixException           when the kernel refuses the set: EINVAL when it holds no CPU
     *                                  that exists and this process may use (its cpuset)
     */
    public static void set(BitSet cpus) {
        if (cpus.isEmpty()) {
            throw new IllegalArgumentException("an empty CPU set: a thread needs at least one CPU");
        }
        if (cpus.length() > MAX_CPUS) {
            throw new IllegalArgumentException("CPU " + (cpus.length() - 1) + " is outside [0, " + MAX_CPUS + ")");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(Posix.cpuSetBytes(), 8);
            long[] words = cpus.toLongArray();
            for (int i = 0; i < words.length; i++) {
                mask.setAtIndex(JAVA_LONG, i, words[i]);
            }
            MemorySegment state = Posix.callState();
            int rc;
            try {
                rc = (int) Posix.SCHED_SETAFFINITY.invokeExact(state, 0, Posix.cpuSetBytes(), mask);
            } catch (Throwable t) {
                throw new AssertionError("sched_setaffinity", t);
            }
            if (rc != 0) {
                throw new PosixException("sched_setaffinity(" + cpus + ")", Posix.errno(state));
            }
        }
    }

    /**
     * @return the CPUs the calling thread may run on
     * @throws PosixException when the kernel refuses the query (not expected on Linux)
     */
    public static BitSet get() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(Posix.cpuSetBytes(), 8);
            MemorySegment state = Posix.callState();
            int rc;
            try {
                rc = (int) Posix.SCHED_GETAFFINITY.invokeExact(state, 0, Posix.cpuSetBytes(), mask);
            } catch (Throwable t) {
                throw new AssertionError("sched_getaffinity", t);
            }
            if (rc < 0) {
                throw new PosixException("sched_getaffinity", Posix.errno(state));
            }
            return BitSet.valueOf(mask.toArray(JAVA_LONG));
        }
    }
}
