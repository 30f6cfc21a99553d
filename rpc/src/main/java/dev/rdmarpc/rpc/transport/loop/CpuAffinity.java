package dev.rdmarpc.rpc.transport.loop;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CPUs a thread may run on, through Linux's {@code sched_setaffinity(2)} and
 * {@code sched_getaffinity(2)} for the calling thread (pid 0), called through the FFM linker.
 *
 * <p>An I/O thread that polls without sleeping (busy-poll, or the adaptive mode's spin) is worth a
 * core of its own: two spinning threads on one core take turns a time slice at a time. Pinning pays
 * where cores are spare. In the Soft-RoCE VM, whose 2 vCPUs carry both JVMs and rxe, pinning the I/O
 * threads alone did not shorten busy-poll's round trip, and pinning each whole JVM to a vCPU did
 * (docs/performance-archive.md, section 4).
 */
public final class CpuAffinity {
    /** CPUs a mask here can name: glibc's {@code CPU_SETSIZE}. */
    public static final int MAX_CPUS = 1024;
    private static final long MASK_BYTES = MAX_CPUS / 8;

    private static final StructLayout ERRNO_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = ERRNO_STATE.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SET;
    private static final MethodHandle GET;

    static {
        MethodHandle set = null;
        MethodHandle get = null;
        if (isLinux()) {
            Linker linker = Linker.nativeLinker();
            FunctionDescriptor d = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS);
            set = linker.defaultLookup().find("sched_setaffinity")
                    .map(a -> linker.downcallHandle(a, d, Linker.Option.captureCallState("errno"))).orElse(null);
            get = linker.defaultLookup().find("sched_getaffinity")
                    .map(a -> linker.downcallHandle(a, d, Linker.Option.captureCallState("errno"))).orElse(null);
        }
        SET = set;
        GET = get;
    }

    private CpuAffinity() {
    }

    private static boolean isLinux() {
        return System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("linux");
    }

    /** @return whether this platform lets a thread be pinned here (Linux) */
    public static boolean isSupported() {
        return SET != null && GET != null;
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
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            mask.set(JAVA_LONG, (cpu / 64) * 8L, 1L << (cpu % 64));
            MemorySegment state = arena.allocate(ERRNO_STATE);
            int rc = (int) SET.invokeExact(state, 0, MASK_BYTES, mask);
            if (rc != 0) {
                int errno = (int) ERRNO.get(state, 0L);
                throw new IllegalArgumentException("sched_setaffinity(CPU " + cpu + ") failed, errno " + errno
                        + (errno == 22 ? " (EINVAL: no such CPU, or not one this process may use: " + currentThreadCpus() + ")" : ""));
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity failed", t);
        }
    }

    /**
     * @return the CPUs the calling thread may run on, ascending
     * @throws UnsupportedOperationException off Linux
     */
    public static List<Integer> currentThreadCpus() {
        requireSupported();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            MemorySegment state = arena.allocate(ERRNO_STATE);
            int rc = (int) GET.invokeExact(state, 0, MASK_BYTES, mask);
            if (rc < 0) {
                throw new IllegalStateException("sched_getaffinity failed, errno " + (int) ERRNO.get(state, 0L));
            }
            List<Integer> cpus = new ArrayList<>();
            for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
                if ((mask.get(JAVA_LONG, (cpu / 64) * 8L) & (1L << (cpu % 64))) != 0) {
                    cpus.add(cpu);
                }
            }
            return cpus;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_getaffinity failed", t);
        }
    }

    private static void requireSupported() {
        if (!isSupported()) {
            throw new UnsupportedOperationException("pinning a thread to a CPU needs Linux's sched_setaffinity (os.name "
                    + System.getProperty("os.name") + ")");
        }
    }
}
