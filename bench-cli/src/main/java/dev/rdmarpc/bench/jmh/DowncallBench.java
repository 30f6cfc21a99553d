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
 * The cost of one FFM downcall: {@code getpid()} from libc through {@link Linker}, the cheapest real
 * native call there is, next to the same call marked {@link Linker.Option#critical critical} (no thread
 * state transition) and to {@link ProcessHandle#pid()} (a cached value, the floor). No RDMA device is
 * needed; an empty completion-queue poll is the device variant, for when the verbs layer exists.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DowncallBench {
    private static final MethodHandle GETPID;
    private static final MethodHandle GETPID_CRITICAL;

    static {
        Linker linker = Linker.nativeLinker();
        var getpid = linker.defaultLookup().find("getpid").orElseThrow();
        FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT);
        GETPID = linker.downcallHandle(getpid, fd);
        GETPID_CRITICAL = linker.downcallHandle(getpid, fd, Linker.Option.critical(false));
    }

    /** One ordinary downcall. */
    @Benchmark
    public int getpid() throws Throwable {
        return (int) GETPID.invokeExact();
    }

    /** One critical downcall: no safepoint transition, the floor of FFM's overhead. */
    @Benchmark
    public int getpidCritical() throws Throwable {
        return (int) GETPID_CRITICAL.invokeExact();
    }

    /** No native call at all: the JDK's cached pid, for scale. */
    @Benchmark
    public long processHandlePid() {
        return ProcessHandle.current().pid();
    }
}
