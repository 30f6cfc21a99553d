package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
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
 * Codecs of the RPC layer, encoding into and decoding from a preallocated off-heap buffer, as the RPC
 * layer does into a pooled frame: a record (fixed fields and a string), a string alone, and the frame
 * header. Encoding should allocate nothing; decoding allocates the values it returns.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CodecBench {
    /** A typical small request. */
    public record Quote(long id, int quantity, double price, String symbol) {
    }

    private static final Codec<Quote> QUOTE = Codecs.record(MethodHandles.lookup(), Quote.class);

    private Arena arena;
    private MemorySegment buffer;
    private Quote quote;
    private String text;
    private int quoteLength;
    private int textLength;
    private MemorySegment encodedQuote;
    private MemorySegment encodedText;
    private long requestId;

    @Setup
    public void setUp() {
        arena = Arena.ofConfined();
        buffer = arena.allocate(4096, 64);
        quote = new Quote(42, 100, 12.5, "RDMA");
        text = "hello, rdmarpc: a short ASCII request string";
        quoteLength = QUOTE.encodedSize(quote);
        textLength = Codecs.STRING.encodedSize(text);
        encodedQuote = arena.allocate(quoteLength);
        QUOTE.encode(quote, encodedQuote, 0);
        encodedText = arena.allocate(textLength);
        Codecs.STRING.encode(text, encodedText, 0);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int encodeRecord() {
        int n = QUOTE.encodedSize(quote);
        QUOTE.encode(quote, buffer, FrameDescriptor.HEADER_LENGTH);
        return n;
    }

    @Benchmark
    public Quote decodeRecord() {
        return QUOTE.decode(encodedQuote, 0, quoteLength);
    }

    @Benchmark
    public int encodeString() {
        int n = Codecs.STRING.encodedSize(text);
        Codecs.STRING.encode(text, buffer, FrameDescriptor.HEADER_LENGTH);
        return n;
    }

    @Benchmark
    public String decodeString() {
        return Codecs.STRING.decode(encodedText, 0, textLength);
    }

    /** Writes a request header and reads its fields back, as the two ends of a call do. */
    @Benchmark
    public long frameHeader() {
        FrameHeader.write(buffer, 0, FrameDescriptor.TYPE_REQUEST, ++requestId, 0x1234abcd, 0, quoteLength, 0);
        return FrameHeader.requestId(buffer, 0) + FrameHeader.payloadLength(buffer, 0) + FrameHeader.methodId(buffer, 0);
    }
}
