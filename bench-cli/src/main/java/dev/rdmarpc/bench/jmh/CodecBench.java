package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * The encode/decode path of a frame, in place in native memory: header write, header check and
 * read, payload encode for {@code MemorySegment}, {@code String} and {@code long}. Expected with
 * {@code -prof gc}: 0 B/op for all but {@link #decodeString} (a String is an allocation by nature).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CodecBench {
    private Arena arena;
    private MemorySegment frame;
    private MemorySegment payload128;
    private final String ascii128 = "x".repeat(128);
    private final Long boxedLong = 123_456_789_012L;
    private long requestId;
    private final FrameHeaderEncoder header = new FrameHeaderEncoder();

    @Setup(Level.Trial)
    public void setup() {
        arena = Arena.ofShared();
        frame = arena.allocate(64 * 1024);
        payload128 = arena.allocate(128).fill((byte) 7);
        header.wrap(frame, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(1).methodId(42).payloadLength(128);
        Codecs.STRING.encode(ascii128, frame, FrameDescriptor.HEADER_LENGTH);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** Writes a whole request header. */
    @Benchmark
    public MemorySegment encodeHeader() {
        header.wrap(frame, 4096).type(FrameDescriptor.TYPE_REQUEST).requestId(++requestId).methodId(42).payloadLength(128);
        return frame;
    }

    /** Validates a received header and reads its fields, as a transport and the core do. */
    @Benchmark
    public long checkAndReadHeader() {
        long len = FrameDescriptor.check(frame, 0, 1024, FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH);
        return len + FrameHeader.requestId(frame, 0) + FrameHeader.methodId(frame, 0) + FrameHeader.status(frame, 0)
                + FrameHeader.payloadLength(frame, 0) + FrameHeader.attachmentLength(frame, 0);
    }

    /** Header plus a 128-byte {@code MemorySegment} payload copied into the frame ({@code Codecs.SEGMENT}). */
    @Benchmark
    public MemorySegment encodeSegmentFrame() {
        header.wrap(frame, 8192).type(FrameDescriptor.TYPE_REQUEST).requestId(++requestId).methodId(42)
                .payloadLength(Codecs.SEGMENT.encodedSize(payload128));
        Codecs.SEGMENT.encode(payload128, frame, 8192 + FrameDescriptor.HEADER_LENGTH);
        return frame;
    }

    /** A 128-char ASCII String encoded as UTF-8 straight into the frame (no byte[]). */
    @Benchmark
    public MemorySegment encodeString() {
        int n = Codecs.STRING.encodedSize(ascii128);
        Codecs.STRING.encode(ascii128, frame, 16384);
        return n > 0 ? frame : null;
    }

    /** A boxed long (preallocated) encoded little-endian. */
    @Benchmark
    public MemorySegment encodeLong() {
        Codecs.LONG.encode(boxedLong, frame, 20000);
        return frame;
    }

    /** A flyweight read of a payload field: what a zero-copy decoder does. */
    @Benchmark
    public long decodeFlyweightField() {
        return frame.get(Codecs.LONG_LE, FrameDescriptor.HEADER_LENGTH) + frame.get(Codecs.INT_LE, FrameDescriptor.HEADER_LENGTH + 8);
    }

    /** For contrast: decoding a String allocates the String (and its bytes). */
    @Benchmark
    public String decodeString() {
        return Codecs.STRING.decode(frame, FrameDescriptor.HEADER_LENGTH, 128);
    }
}
