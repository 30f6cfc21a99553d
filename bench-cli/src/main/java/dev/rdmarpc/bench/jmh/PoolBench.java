package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The buffer pool's acquire/release pair, the operation every frame sent or received goes through: a
 * chunk (64 KiB, the default) and a large buffer (1 MiB, above the chunk size). Both should allocate
 * nothing once the pool is warm.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PoolBench {
    private BufferPool pool;

    @Setup
    public void setUp() {
        pool = BufferPool.create();
    }

    @TearDown
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public int acquireReleaseChunk() {
        PooledBuffer b = pool.acquire();
        int capacity = b.capacity();
        b.release();
        return capacity;
    }

    @Benchmark
    public int acquireReleaseLarge() {
        PooledBuffer b = pool.acquire(1 << 20);
        int capacity = b.capacity();
        b.release();
        return capacity;
    }
}
