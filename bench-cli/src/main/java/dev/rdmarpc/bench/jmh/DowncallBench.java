package dev.rdmarpc.bench.jmh;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one FFM downcall into libc through {@link Linker}: {@code abs(int)} (pure user space, so the
 * figure is FFM's own overhead), the same marked {@link Linker.Option#critical critical} (no thread state
 * transition), and {@code getpid()} (a real system call, to show what a syscall adds on this machine),
 * with {@link ProcessHandle#pid()} (a cached value, no native call) for scale. No RDMA device is needed;
 * an empty completion-queue poll is the device variant, for when the verbs layer exists.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DowncallBench {
    private static final MethodHandle ABS;
    private static final MethodHandle ABS_CRITICAL;
    private static final MethodHandle GETPID;

    static {
        Linker linker = Linker.nativeLinker();
        var abs = linker.defaultLookup().find("abs").orElseThrow();
        FunctionDescriptor intToInt = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
        ABS = linker.downcallHandle(abs, intToInt);
        ABS_CRITICAL = linker.downcallHandle(abs, intToInt, Linker.Option.critical(false));
        GETPID = linker.downcallHandle(linker.defaultLookup().find("getpid").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT));
    }

    /** Argument read from a field, so that the call cannot be folded. */
    int value = -42;

    /** One ordinary downcall of a trivial function. */
    @Benchmark
    public int abs() throws Throwable {
        return (int) ABS.invokeExact(value);
    }

    /** One critical downcall: no thread-state transition, the floor of FFM's overhead. */
    @Benchmark
    public int absCritical() throws Throwable {
        return (int) ABS_CRITICAL.invokeExact(value);
    }

    /** One ordinary downcall that makes a system call. */
    @Benchmark
    public int getpid() throws Throwable {
        return (int) GETPID.invokeExact();
    }

    /** No native call at all: the JDK's cached pid, for scale. */
    @Benchmark
    public long processHandlePid() {
        return ProcessHandle.current().pid();
    }
}
