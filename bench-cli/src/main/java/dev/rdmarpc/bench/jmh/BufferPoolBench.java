package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Acquire and release of pooled buffers: a chunk, a cached large buffer, and the chunk's cached
 * {@code ByteBuffer} view. Expected with {@code -prof gc}: 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BufferPoolBench {
    private BufferPool pool;

    @Setup(Level.Trial)
    public void setup() {
        pool = BufferPool.create();
        pool.acquire(1 << 20).release(); // populate the large-buffer cache
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    /** One chunk acquired and released. */
    @Benchmark
    public int acquireReleaseChunk() {
        PooledBuffer b = pool.acquire();
        int c = b.capacity();
        b.release();
        return c;
    }

    /** A chunk and its cached NIO view, as the TCP transport reads into it. */
    @Benchmark
    public int acquireChunkWithByteBufferView() {
        PooledBuffer b = pool.acquire();
        int c = b.byteBuffer().capacity();
        b.release();
        return c;
    }

    /** A 1 MiB large buffer served from the pool's cache. */
    @Benchmark
    public int acquireReleaseLarge() {
        PooledBuffer b = pool.acquire(1 << 20);
        int c = b.capacity();
        b.release();
        return c;
    }
}
