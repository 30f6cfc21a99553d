package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CodecTest {
    enum Color { RED, GREEN }

    record Inner(short s, char c, float f, Color color) {
    }

    record All(boolean z, byte b, int i, long l, double d, String str, byte[] bytes, Inner inner, MemorySegment seg) {
    }

    private static <T> T roundTrip(Codec<T> codec, T value) {
        try (Arena arena = Arena.ofConfined()) {
            int size = codec.encodedSize(value);
            MemorySegment buf = arena.allocate(size + 16);
            codec.encode(value, buf, 7);
            T back = codec.decode(buf, 7, size);
            if (codec.decodesToView()) {
                return back; // only valid inside the arena; callers check right away
            }
            return back;
        }
    }

    @Test
    void primitives() {
        assertEquals(true, roundTrip(Codecs.BOOLEAN, true));
        assertEquals((byte) -3, roundTrip(Codecs.BYTE, (byte) -3));
        assertEquals((short) 31000, roundTrip(Codecs.SHORT, (short) 31000));
        assertEquals('λ', roundTrip(Codecs.CHAR, 'λ'));
        assertEquals(-123456789, roundTrip(Codecs.INT, -123456789));
        assertEquals(Long.MIN_VALUE, roundTrip(Codecs.LONG, Long.MIN_VALUE));
        assertEquals(1.5f, roundTrip(Codecs.FLOAT, 1.5f));
        assertEquals(Math.PI, roundTrip(Codecs.DOUBLE, Math.PI));
        assertNull(roundTrip(Codecs.VOID, null));
        assertEquals(0, Codecs.VOID.encodedSize(null));
    }

    @Test
    void primitivesAreLittleEndian() {
        MemorySegment seg = MemorySegment.ofArray(new byte[4]);
        Codecs.INT.encode(0x01020304, seg, 0);
        assertArrayEquals(new byte[]{4, 3, 2, 1}, seg.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void wrongLengthIsRejected() {
        MemorySegment seg = MemorySegment.ofArray(new byte[16]);
        assertThrows(IllegalArgumentException.class, () -> Codecs.INT.decode(seg, 0, 3));
        assertThrows(IllegalArgumentException.class, () -> Codecs.LONG.decode(seg, 0, 9));
    }

    @Test
    void utf8MatchesTheJdk() {
        SplittableRandom rnd = new SplittableRandom(42);
        for (int n = 0; n < 2000; n++) {
            StringBuilder sb = new StringBuilder();
            int len = rnd.nextInt(40);
            for (int i = 0; i < len; i++) {
                switch (rnd.nextInt(5)) {
                    case 0 -> sb.append((char) rnd.nextInt(0x80));
                    case 1 -> sb.append((char) (0x80 + rnd.nextInt(0x780)));
                    case 2 -> sb.append((char) (0x800 + rnd.nextInt(0xD000)));
                    case 3 -> sb.appendCodePoint(0x10000 + rnd.nextInt(0xFFFFF));
                    default -> sb.append((char) (0xE000 + rnd.nextInt(0x2000)));
                }
            }
            String s = sb.toString();
            byte[] jdk = s.getBytes(StandardCharsets.UTF_8);
            assertEquals(jdk.length, Codecs.STRING.encodedSize(s));
            MemorySegment seg = MemorySegment.ofArray(new byte[jdk.length]);
            Codecs.STRING.encode(s, seg, 0);
            assertArrayEquals(jdk, seg.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(s, roundTrip(Codecs.STRING, s));
        }
        // Unpaired surrogates: replaced, same as the JDK's encoder.
        String lone = "a\uD800b";
        assertArrayEquals(lone.getBytes(StandardCharsets.UTF_8), encode(Codecs.STRING, lone));
    }

    private static <T> byte[] encode(Codec<T> c, T v) {
        MemorySegment seg = MemorySegment.ofArray(new byte[c.encodedSize(v)]);
        c.encode(v, seg, 0);
        return seg.toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void bytesAndSegments() {
        assertArrayEquals(new byte[]{1, 2, 3}, roundTrip(Codecs.BYTES, new byte[]{1, 2, 3}));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(64);
            MemorySegment value = MemorySegment.ofArray(new byte[]{5, 6, 7, 8});
            Codecs.SEGMENT.encode(value, buf, 10);
            MemorySegment view = Codecs.SEGMENT.decode(buf, 10, 4);
            assertTrue(Codecs.SEGMENT.decodesToView());
            assertEquals(buf.address() + 10, view.address(), "a view, not a copy");
            assertArrayEquals(new byte[]{5, 6, 7, 8}, view.toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void records() {
        Codec<All> codec = Codecs.record(MethodHandles.lookup(), All.class);
        assertTrue(codec.decodesToView(), "a MemorySegment component makes the record a view");
        try (Arena arena = Arena.ofConfined()) {
            All v = new All(true, (byte) 1, 2, 3L, 4.5, "fünf", new byte[]{6}, new Inner((short) 7, 'x', 8.5f, Color.GREEN),
                    MemorySegment.ofArray(new byte[]{9, 9}));
            int size = codec.encodedSize(v);
            MemorySegment buf = arena.allocate(size);
            codec.encode(v, buf, 0);
            All back = codec.decode(buf, 0, size);
            assertEquals(v.str(), back.str());
            assertEquals(v.inner(), back.inner());
            assertArrayEquals(v.bytes(), back.bytes());
            assertArrayEquals(new byte[]{9, 9}, back.seg().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(v.d(), back.d());
            All nulls = new All(false, (byte) 0, 0, 0, 0, null, null, null, null);
            int n = codec.encodedSize(nulls);
            codec.encode(nulls, buf, 0);
            All nb = codec.decode(buf, 0, n);
            assertNull(nb.str());
            assertNull(nb.inner());
            assertNull(nb.seg());
            // Malformed: cut inside the last component (its length prefix).
            IllegalArgumentException cut = assertThrows(IllegalArgumentException.class, () -> codec.decode(buf, 0, n - 1));
            assertTrue(cut.getMessage().contains("All.seg"), cut.getMessage());
            // Bad length prefix: negative but not -1.
            buf.set(Codecs.INT_LE, n - 4, -2);
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> codec.decode(buf, 0, n));
            assertTrue(bad.getMessage().contains("bad length -2 of record field All.seg"), bad.getMessage());
            buf.set(Codecs.INT_LE, n - 4, -1);
            // Trailing bytes are a newer definition's components (see SchemaEvolutionTest): ignored.
            buf.set(ValueLayout.JAVA_BYTE, n, (byte) 0x7F);
            All tb = codec.decode(buf, 0, n + 1);
            assertEquals(nb.inner(), tb.inner());
            assertNull(tb.str());
            assertNull(tb.seg());
            assertFalse(tb.z());
        }
    }

    @Test
    void randomBytesNeverEscapeTheRecordPayload() {
        Codec<All> codec = Codecs.record(MethodHandles.lookup(), All.class);
        SplittableRandom rnd = new SplittableRandom(7);
        byte[] bytes = new byte[128];
        MemorySegment seg = MemorySegment.ofArray(bytes);
        for (int i = 0; i < 5_000; i++) {
            for (int j = 0; j < bytes.length; j++) {
                bytes[j] = (byte) rnd.nextInt();
            }
            int len = rnd.nextInt(64);
            try {
                codec.decode(seg.asSlice(32, len), 0, len);
            } catch (IllegalArgumentException expected) {
                // fine: malformed
            }
        }
    }

    @Test
    void unsupportedRecordComponent() {
        record Bad(Object o) {
        }
        assertThrows(IllegalArgumentException.class, () -> Codecs.record(MethodHandles.lookup(), Bad.class));
    }

    @Test
    void theHeaderEncoderWritesWhatTheReaderAndTheCheckRead() {
        MemorySegment buf = MemorySegment.ofArray(new byte[256]).fill((byte) 0x5A); // dirty: wrap must blank it
        FrameHeaderEncoder h = new FrameHeaderEncoder();
        h.wrap(buf, 64).type(FrameDescriptor.TYPE_RESPONSE).requestId(0x1122334455667788L).methodId(-7).status(0xFFFE)
                .payloadLength(40).attachmentLength(12);
        assertEquals(FrameDescriptor.HEADER_LENGTH + 40 + 12, FrameDescriptor.check(buf, 64, 192, 4096));
        assertEquals(FrameDescriptor.TYPE_RESPONSE, FrameHeader.type(buf, 64));
        assertEquals(0x1122334455667788L, FrameHeader.requestId(buf, 64));
        assertEquals(-7, FrameHeader.methodId(buf, 64));
        assertEquals(0xFFFE, FrameHeader.status(buf, 64));
        assertEquals(40, FrameHeader.payloadLength(buf, 64));
        assertEquals(12, FrameHeader.attachmentLength(buf, 64));
        assertEquals(0x5A, buf.get(ValueLayout.JAVA_BYTE, 63), "nothing before the frame is touched");
        assertEquals(0x5A, buf.get(ValueLayout.JAVA_BYTE, 64 + FrameDescriptor.HEADER_LENGTH),
                "nothing after the header is touched");
        // A blank header: a request with status OK, no flags, nothing after it; the reserved fields are 0.
        h.wrap(buf, 64).type(FrameDescriptor.TYPE_REQUEST);
        assertEquals(FrameDescriptor.HEADER_LENGTH, FrameDescriptor.check(buf, 64, 192, 4096));
        assertEquals(0, FrameHeader.requestId(buf, 64));
        assertEquals(0, FrameHeader.methodId(buf, 64));
        assertEquals(FrameDescriptor.STATUS_OK, FrameHeader.status(buf, 64));
        assertEquals(0, FrameHeader.payloadLength(buf, 64) + FrameHeader.attachmentLength(buf, 64));
        assertEquals(0, buf.get(ValueLayout.JAVA_SHORT_UNALIGNED, 64 + FrameDescriptor.FLAGS_OFFSET));
        assertEquals(0, buf.get(ValueLayout.JAVA_SHORT_UNALIGNED, 64 + FrameDescriptor.RESERVED_OFFSET));
    }

    @Test
    void methodIdsAreFnv1a() {
        assertEquals(0x811C9DC5, FrameDescriptor.methodId(""));
        assertEquals(0xE40C292C, FrameDescriptor.methodId("a"));
        assertEquals(FrameDescriptor.methodId("echo"), Method.of("echo", Codecs.STRING, Codecs.STRING).id());
        assertThrows(IllegalArgumentException.class, () -> Method.raw(""));
    }

    @Test
    void duplicateMethodIdsAreRefused() {
        Method<String, String> a = Method.of("same", Codecs.STRING, Codecs.STRING);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpcServer.builder().register(a, (c, s) -> s).register(a, (c, s) -> s));
        assertTrue(e.getMessage().contains("already registered"));
    }
}
