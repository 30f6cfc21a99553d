package dev.rdmarpc.rpc.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The built-in codecs, and the little-endian layouts they use.
 *
 * <p>Primitive codecs write the value little-endian with no framing. {@link #STRING} writes UTF-8
 * without a terminator. {@link #BYTES} copies a {@code byte[]}. {@link #SEGMENT} is the zero-copy
 * codec: it encodes by copying the segment's bytes straight into the frame buffer, and decodes to a
 * <em>view</em> of the received bytes (see {@link Codec#decodesToView()}). {@link #record} builds a
 * codec for a Java record from its components.
 */
public final class Codecs {
    /** Little-endian unaligned {@code short}. */
    public static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian unaligned {@code char}. */
    public static final ValueLayout.OfChar CHAR_LE = ValueLayout.JAVA_CHAR_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian unaligned {@code int}. */
    public static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian unaligned {@code long}. */
    public static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian unaligned {@code float}. */
    public static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian unaligned {@code double}. */
    public static final ValueLayout.OfDouble DOUBLE_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** No payload: encodes nothing, decodes to null. For methods without a request or a response. */
    public static final Codec<Void> VOID = new FixedCodec<>(0) {
        @Override
        public void encode(Void value, MemorySegment dst, long offset) {
        }

        @Override
        Void read(MemorySegment src, long offset) {
            return null;
        }
    };

    /** A {@code boolean} as one byte, 0 or 1. */
    public static final Codec<Boolean> BOOLEAN = new FixedCodec<>(1) {
        @Override
        public void encode(Boolean value, MemorySegment dst, long offset) {
            dst.set(ValueLayout.JAVA_BYTE, offset, value ? (byte) 1 : (byte) 0);
        }

        @Override
        Boolean read(MemorySegment src, long offset) {
            return src.get(ValueLayout.JAVA_BYTE, offset) != 0;
        }
    };

    /** A {@code byte}. */
    public static final Codec<Byte> BYTE = new FixedCodec<>(1) {
        @Override
        public void encode(Byte value, MemorySegment dst, long offset) {
            dst.set(ValueLayout.JAVA_BYTE, offset, value);
        }

        @Override
        Byte read(MemorySegment src, long offset) {
            return src.get(ValueLayout.JAVA_BYTE, offset);
        }
    };

    /** A {@code short}, little-endian. */
    public static final Codec<Short> SHORT = new FixedCodec<>(2) {
        @Override
        public void encode(Short value, MemorySegment dst, long offset) {
            dst.set(SHORT_LE, offset, value);
        }

        @Override
        Short read(MemorySegment src, long offset) {
            return src.get(SHORT_LE, offset);
        }
    };

    /** A {@code char}, little-endian UTF-16 code unit. */
    public static final Codec<Character> CHAR = new FixedCodec<>(2) {
        @Override
        public void encode(Character value, MemorySegment dst, long offset) {
            dst.set(CHAR_LE, offset, value);
        }

        @Override
        Character read(MemorySegment src, long offset) {
            return src.get(CHAR_LE, offset);
        }
    };

    /** An {@code int}, little-endian. */
    public static final Codec<Integer> INT = new FixedCodec<>(4) {
        @Override
        public void encode(Integer value, MemorySegment dst, long offset) {
            dst.set(INT_LE, offset, value);
        }

        @Override
        Integer read(MemorySegment src, long offset) {
            return src.get(INT_LE, offset);
        }
    };

    /** A {@code long}, little-endian. */
    public static final Codec<Long> LONG = new FixedCodec<>(8) {
        @Override
        public void encode(Long value, MemorySegment dst, long offset) {
            dst.set(LONG_LE, offset, value);
        }

        @Override
        Long read(MemorySegment src, long offset) {
            return src.get(LONG_LE, offset);
        }
    };

    /** A {@code float}, little-endian IEEE 754. */
    public static final Codec<Float> FLOAT = new FixedCodec<>(4) {
        @Override
        public void encode(Float value, MemorySegment dst, long offset) {
            dst.set(FLOAT_LE, offset, value);
        }

        @Override
        Float read(MemorySegment src, long offset) {
            return src.get(FLOAT_LE, offset);
        }
    };

    /** A {@code double}, little-endian IEEE 754. */
    public static final Codec<Double> DOUBLE = new FixedCodec<>(8) {
        @Override
        public void encode(Double value, MemorySegment dst, long offset) {
            dst.set(DOUBLE_LE, offset, value);
        }

        @Override
        Double read(MemorySegment src, long offset) {
            return src.get(DOUBLE_LE, offset);
        }
    };

    /**
     * A {@code String} as UTF-8 bytes, no length prefix or terminator (the payload length frames it).
     * Encoding writes the UTF-8 bytes directly into the frame, without an intermediate array;
     * unpaired surrogates become {@code '?'}. Null is not allowed.
     */
    public static final Codec<String> STRING = new Codec<>() {
        @Override
        public int encodedSize(String value) {
            return Utf8.length(value);
        }

        @Override
        public void encode(String value, MemorySegment dst, long offset) {
            Utf8.encode(value, dst, offset);
        }

        @Override
        public String decode(MemorySegment src, long offset, int length) {
            return Utf8.decode(src, offset, length);
        }

        @Override
        public String toString() {
            return "Codecs.STRING";
        }
    };

    /** A {@code byte[]}, copied in and out. Null is not allowed. */
    public static final Codec<byte[]> BYTES = new Codec<>() {
        @Override
        public int encodedSize(byte[] value) {
            return value.length;
        }

        @Override
        public void encode(byte[] value, MemorySegment dst, long offset) {
            MemorySegment.copy(value, 0, dst, ValueLayout.JAVA_BYTE, offset, value.length);
        }

        @Override
        public byte[] decode(MemorySegment src, long offset, int length) {
            byte[] out = new byte[length];
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, offset, out, 0, length);
            return out;
        }

        @Override
        public String toString() {
            return "Codecs.BYTES";
        }
    };

    /**
     * A {@link MemorySegment}, zero-copy: encoding copies the segment's bytes (all
     * {@code byteSize()} of them, which must fit in an int) straight into the frame buffer; decoding
     * returns a view of the received bytes, valid only while the receive buffer is (during an inline
     * handler or a response callback). Where a decoded value must outlive that, the RPC layer copies
     * it first (see {@link Codec#decodesToView()}).
     */
    public static final Codec<MemorySegment> SEGMENT = new Codec<>() {
        @Override
        public int encodedSize(MemorySegment value) {
            return Math.toIntExact(value.byteSize());
        }

        @Override
        public void encode(MemorySegment value, MemorySegment dst, long offset) {
            MemorySegment.copy(value, 0, dst, offset, value.byteSize());
        }

        @Override
        public MemorySegment decode(MemorySegment src, long offset, int length) {
            return src.asSlice(offset, length);
        }

        @Override
        public boolean decodesToView() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.SEGMENT";
        }
    };

    private Codecs() {
    }

    /**
     * A codec for a public record type in an exported package (or one opened to
     * {@code dev.rdmarpc.rpc}). Supported component types: the eight primitives, {@code String},
     * {@code byte[]}, enums, {@link MemorySegment} (decoded as a view) and nested records of
     * supported types. Fixed-size components are written little-endian in declaration order;
     * variable-size ones (String, byte[], MemorySegment, records) carry an int length prefix, -1 for
     * null; an enum is its int ordinal, -1 for null.
     *
     * <p><b>Records that evolve.</b> A record may gain components <em>at the end</em>, and peers built
     * with the older and the newer definition still understand each other, both ways:
     * <ul>
     *   <li>an older decoder reads the components it knows and ignores the bytes after them (the
     *       newer components);</li>
     *   <li>a newer decoder reading an older encoding, which ends exactly where a component would
     *       start, gives that component and every one after it its default: 0, {@code false} or
     *       {@code '\0'} for primitives, null for String, byte[], MemorySegment, enums and records.</li>
     * </ul>
     * Nested records carry their own length, so a nested record may gain components at its end too.
     * A payload that ends in the middle of a component is malformed ({@code IllegalArgumentException}
     * naming the component); one cut exactly at a component boundary cannot be told from an older
     * encoding. Removing or reordering components, changing a component's type, or adding one anywhere
     * but at the end is not compatible: the bytes are read by position, so such a change is misread or
     * rejected, never detected as such. (Names are not on the wire: renaming a component is harmless.)
     * An enum may gain constants at its end; a decoder that receives an ordinal beyond its own
     * constants throws {@code IllegalArgumentException} naming the enum and the ordinal (so the call
     * fails with {@code PROTOCOL_ERROR}), while every other value still decodes. Reordering or
     * removing enum constants changes what the ordinals mean and is not compatible.
     *
     * @param type the record class
     * @param <R>  the record type
     * @return a thread-safe codec
     * @throws IllegalArgumentException when a component type is not supported or the record is not
     *                                  accessible
     */
    public static <R extends Record> Codec<R> record(Class<R> type) {
        return RecordCodec.of(MethodHandles.publicLookup(), type);
    }

    /**
     * A codec for a record type that only {@code lookup} can access (a non-public record, or one in
     * a package your module does not export): pass {@code MethodHandles.lookup()} from your code.
     * The encoding, and the rule for records that evolve, are those of {@link #record(Class)}.
     *
     * @param lookup a lookup with access to the record's accessors and canonical constructor
     * @param type   the record class
     * @param <R>    the record type
     * @return a thread-safe codec
     * @throws IllegalArgumentException when a component type is not supported or not accessible
     */
    public static <R extends Record> Codec<R> record(MethodHandles.Lookup lookup, Class<R> type) {
        return RecordCodec.of(lookup, type);
    }

    /**
     * Checks that a fixed-size payload has the expected length.
     *
     * @param actual   the payload length received
     * @param expected the length the codec needs
     * @throws IllegalArgumentException when they differ
     */
    public static void requireLength(int actual, int expected) {
        if (actual != expected) {
            throw new IllegalArgumentException("expected " + expected + " payload bytes, got " + actual);
        }
    }

    /** Base of fixed-size codecs: checks the length, then reads. */
    private abstract static class FixedCodec<T> implements Codec<T> {
        private final int size;

        FixedCodec(int size) {
            this.size = size;
        }

        @Override
        public final int encodedSize(T value) {
            return size;
        }

        @Override
        public final T decode(MemorySegment src, long offset, int length) {
            requireLength(length, size);
            return read(src, offset);
        }

        abstract T read(MemorySegment src, long offset);
    }

    /** UTF-8 without intermediate arrays on the encode side. */
    static final class Utf8 {
        private Utf8() {
        }

        static int length(String s) {
            int n = s.length();
            int bytes = n;
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c >= 0x80) {
                    if (c < 0x800) {
                        bytes += 1;
                    } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                        bytes += 2; // 4 bytes for 2 chars
                        i++;
                    } else if (Character.isSurrogate(c)) {
                        // unpaired surrogate: encoded as '?'
                    } else {
                        bytes += 2;
                    }
                }
            }
            return bytes;
        }

        static void encode(String s, MemorySegment dst, long offset) {
            int n = s.length();
            long p = offset;
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) c);
                } else if (c < 0x800) {
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0xC0 | (c >> 6)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | (c & 0x3F)));
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0xF0 | (cp >> 18)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | ((cp >> 12) & 0x3F)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | ((cp >> 6) & 0x3F)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | (cp & 0x3F)));
                } else if (Character.isSurrogate(c)) {
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) '?');
                } else {
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0xE0 | (c >> 12)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | ((c >> 6) & 0x3F)));
                    dst.set(ValueLayout.JAVA_BYTE, p++, (byte) (0x80 | (c & 0x3F)));
                }
            }
        }

        static String decode(MemorySegment src, long offset, int length) {
            byte[] bytes = new byte[length];
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
