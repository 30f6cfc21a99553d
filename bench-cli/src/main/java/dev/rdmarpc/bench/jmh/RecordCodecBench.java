package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
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
 * The record codec ({@link Codecs#record}) on a typical small request, a record of fixed fields and a
 * string, encoded into and decoded from preallocated native memory. Decoding allocates the record and
 * its string by nature; encoding should allocate nothing.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RecordCodecBench {
    /** A typical small request. */
    public record Quote(long id, int quantity, double price, String symbol) {
    }

    private static final Codec<Quote> QUOTE = Codecs.record(MethodHandles.lookup(), Quote.class);

    private Arena arena;
    private MemorySegment frame;
    private MemorySegment encoded;
    private Quote quote;
    private int length;

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofConfined();
        frame = arena.allocate(4096, 64);
        quote = new Quote(42, 100, 12.5, "RDMA");
        length = QUOTE.encodedSize(quote);
        encoded = arena.allocate(length);
        QUOTE.encode(quote, encoded, 0);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** Size, then encode in place after a frame header. */
    @Benchmark
    public int encodeRecord() {
        int n = QUOTE.encodedSize(quote);
        QUOTE.encode(quote, frame, FrameDescriptor.HEADER_LENGTH);
        return n;
    }

    /** Decode into a new record (and its string). */
    @Benchmark
    public Quote decodeRecord() {
        return QUOTE.decode(encoded, 0, length);
    }
}
