package dev.rdmarpc.rpc.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.RecordComponent;

/**
 * Codec for a Java record, built from its components (see {@link Codecs#record(Class)}).
 *
 * <p>Positional, and tolerant at the end so that a record may gain components there: {@link #decode}
 * reads the components it knows in order; where the payload ends exactly before a component, that
 * component and the ones after it take their defaults (0, false, {@code '\0'}, or null), and bytes
 * left after the last known component are ignored. A payload that ends inside a component is
 * malformed. Nested records are length-prefixed, so the same holds at every level. The encoder is
 * unchanged by this: it writes every component it knows.
 */
final class RecordCodec<R extends Record> implements Codec<R> {
    private static final int NULL = -1;

    private final Class<R> type;
    // Set once by of(), before the codec is published; a record may contain itself (a list, a tree).
    private Field[] fields;
    private MethodHandle constructor;
    private boolean view;

    private RecordCodec(Class<R> type) {
        this.type = type;
    }

    static <R extends Record> RecordCodec<R> of(MethodHandles.Lookup lookup, Class<R> type) {
        return of(lookup, type, new java.util.HashMap<>());
    }

    @SuppressWarnings("unchecked")
    private static <R extends Record> RecordCodec<R> of(MethodHandles.Lookup lookup, Class<R> type,
                                                        java.util.Map<Class<?>, RecordCodec<?>> building) {
        if (!type.isRecord()) {
            throw new IllegalArgumentException(type + " is not a record");
        }
        RecordCodec<?> known = building.get(type);
        if (known != null) {
            return (RecordCodec<R>) known;
        }
        RecordCodec<R> codec = new RecordCodec<>(type);
        building.put(type, codec);
        RecordComponent[] rc = type.getRecordComponents();
        Field[] fields = new Field[rc.length];
        Class<?>[] ctorTypes = new Class<?>[rc.length];
        try {
            for (int i = 0; i < rc.length; i++) {
                Class<?> t = rc[i].getType();
                ctorTypes[i] = t;
                MethodHandle getter = lookup.unreflect(rc[i].getAccessor()).asType(MethodType.methodType(Object.class, Record.class));
                fields[i] = new Field(type.getSimpleName() + "." + rc[i].getName(), kindOf(t), getter, t, lookup, building);
            }
            codec.constructor = lookup.findConstructor(type, MethodType.methodType(void.class, ctorTypes))
                    .asSpreader(Object[].class, rc.length)
                    .asType(MethodType.methodType(Object.class, Object[].class));
            codec.fields = fields;
            boolean v = false;
            for (Field f : fields) {
                v |= f.kind == Kind.SEGMENT || (f.kind == Kind.RECORD && f.nested != codec && f.nested.decodesToView());
            }
            codec.view = v;
            return codec;
        } catch (IllegalAccessException | NoSuchMethodException e) {
            throw new IllegalArgumentException("record " + type.getName()
                    + " is not accessible; pass a Lookup with access (Codecs.record(MethodHandles.lookup(), type))", e);
        }
    }

    private static Kind kindOf(Class<?> t) {
        if (t == boolean.class) return Kind.BOOLEAN;
        if (t == byte.class) return Kind.BYTE;
        if (t == short.class) return Kind.SHORT;
        if (t == char.class) return Kind.CHAR;
        if (t == int.class) return Kind.INT;
        if (t == long.class) return Kind.LONG;
        if (t == float.class) return Kind.FLOAT;
        if (t == double.class) return Kind.DOUBLE;
        if (t == String.class) return Kind.STRING;
        if (t == byte[].class) return Kind.BYTES;
        if (t == MemorySegment.class) return Kind.SEGMENT;
        if (t.isEnum()) return Kind.ENUM;
        if (t.isRecord()) return Kind.RECORD;
        throw new IllegalArgumentException("unsupported record component type " + t.getName());
    }

    @Override
    public int encodedSize(R value) {
        long size = 0;
        for (Field f : fields) {
            size += f.size(get(f, value));
        }
        return Math.toIntExact(size);
    }

    @Override
    public void encode(R value, MemorySegment dst, long offset) {
        long p = offset;
        for (Field f : fields) {
            p = f.write(get(f, value), dst, p);
        }
    }

    @Override
    public R decode(MemorySegment src, long offset, int length) {
        long[] pos = {offset};
        long end = offset + length;
        Object[] args = new Object[fields.length];
        int i = 0;
        for (; i < fields.length && pos[0] < end; i++) {
            args[i] = fields[i].read(src, pos, end);
        }
        // The payload ended at a component boundary: it was encoded by an older definition of the
        // record, which ends here. The components it did not have take their defaults.
        for (; i < fields.length; i++) {
            args[i] = fields[i].absent;
        }
        // Bytes after the last component known here are components of a newer definition: not read.
        try {
            return type.cast(constructor.invokeExact(args));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalArgumentException(type.getSimpleName() + " constructor failed", t);
        }
    }

    @Override
    public boolean decodesToView() {
        return view;
    }

    @Override
    public String toString() {
        return "Codecs.record(" + type.getName() + ")";
    }

    private static Object get(Field f, Record value) {
        try {
            return f.getter.invokeExact(value);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("accessor " + f.name + " failed", t);
        }
    }

    private enum Kind { BOOLEAN, BYTE, SHORT, CHAR, INT, LONG, FLOAT, DOUBLE, STRING, BYTES, SEGMENT, ENUM, RECORD }

    private static final class Field {
        /** {@code Record.component}, for messages. */
        final String name;
        final Kind kind;
        final MethodHandle getter;
        final Class<?> type;
        final Object[] enumConstants;
        final RecordCodec<?> nested;
        /** The value when an older encoding ends before this component (boxed constants: no allocation). */
        final Object absent;

        @SuppressWarnings({"unchecked", "rawtypes"})
        Field(String name, Kind kind, MethodHandle getter, Class<?> type, MethodHandles.Lookup lookup,
              java.util.Map<Class<?>, RecordCodec<?>> building) {
            this.name = name;
            this.kind = kind;
            this.getter = getter;
            this.type = type;
            this.absent = absentValue(kind);
            this.enumConstants = kind == Kind.ENUM ? type.getEnumConstants() : null;
            this.nested = kind == Kind.RECORD ? RecordCodec.of(lookup, (Class) type, building) : null;
        }

        private static Object absentValue(Kind kind) {
            return switch (kind) {
                case BOOLEAN -> Boolean.FALSE;
                case BYTE -> Byte.valueOf((byte) 0);
                case SHORT -> Short.valueOf((short) 0);
                case CHAR -> Character.valueOf('\0');
                case INT -> Integer.valueOf(0);
                case LONG -> Long.valueOf(0L);
                case FLOAT -> Float.valueOf(0f);
                case DOUBLE -> Double.valueOf(0d);
                case STRING, BYTES, SEGMENT, ENUM, RECORD -> null;
            };
        }

        long size(Object v) {
            return switch (kind) {
                case BOOLEAN, BYTE -> 1;
                case SHORT, CHAR -> 2;
                case INT, FLOAT, ENUM -> 4;
                case LONG, DOUBLE -> 8;
                case STRING -> 4 + (v == null ? 0 : Codecs.Utf8.length((String) v));
                case BYTES -> 4 + (v == null ? 0 : ((byte[]) v).length);
                case SEGMENT -> 4 + (v == null ? 0 : ((MemorySegment) v).byteSize());
                case RECORD -> 4 + (v == null ? 0 : nestedSize(v));
            };
        }

        @SuppressWarnings("unchecked")
        private int nestedSize(Object v) {
            return ((RecordCodec<Record>) nested).encodedSize((Record) v);
        }

        @SuppressWarnings("unchecked")
        long write(Object v, MemorySegment dst, long p) {
            switch (kind) {
                case BOOLEAN -> dst.set(ValueLayout.JAVA_BYTE, p, (Boolean) v ? (byte) 1 : (byte) 0);
                case BYTE -> dst.set(ValueLayout.JAVA_BYTE, p, (Byte) v);
                case SHORT -> dst.set(Codecs.SHORT_LE, p, (Short) v);
                case CHAR -> dst.set(Codecs.CHAR_LE, p, (Character) v);
                case INT -> dst.set(Codecs.INT_LE, p, (Integer) v);
                case FLOAT -> dst.set(Codecs.FLOAT_LE, p, (Float) v);
                case ENUM -> dst.set(Codecs.INT_LE, p, v == null ? NULL : ((Enum<?>) v).ordinal());
                case LONG -> dst.set(Codecs.LONG_LE, p, (Long) v);
                case DOUBLE -> dst.set(Codecs.DOUBLE_LE, p, (Double) v);
                case STRING -> {
                    if (v == null) {
                        dst.set(Codecs.INT_LE, p, NULL);
                        return p + 4;
                    }
                    String s = (String) v;
                    int n = Codecs.Utf8.length(s);
                    dst.set(Codecs.INT_LE, p, n);
                    Codecs.Utf8.encode(s, dst, p + 4);
                    return p + 4 + n;
                }
                case BYTES -> {
                    if (v == null) {
                        dst.set(Codecs.INT_LE, p, NULL);
                        return p + 4;
                    }
                    byte[] b = (byte[]) v;
                    dst.set(Codecs.INT_LE, p, b.length);
                    MemorySegment.copy(b, 0, dst, ValueLayout.JAVA_BYTE, p + 4, b.length);
                    return p + 4 + b.length;
                }
                case SEGMENT -> {
                    if (v == null) {
                        dst.set(Codecs.INT_LE, p, NULL);
                        return p + 4;
                    }
                    MemorySegment s = (MemorySegment) v;
                    int n = Math.toIntExact(s.byteSize());
                    dst.set(Codecs.INT_LE, p, n);
                    MemorySegment.copy(s, 0, dst, p + 4, n);
                    return p + 4 + n;
                }
                case RECORD -> {
                    if (v == null) {
                        dst.set(Codecs.INT_LE, p, NULL);
                        return p + 4;
                    }
                    RecordCodec<Record> c = (RecordCodec<Record>) nested;
                    int n = c.encodedSize((Record) v);
                    dst.set(Codecs.INT_LE, p, n);
                    c.encode((Record) v, dst, p + 4);
                    return p + 4 + n;
                }
            }
            return p + size(v);
        }

        Object read(MemorySegment src, long[] pos, long end) {
            long p = pos[0];
            int fixed = switch (kind) {
                case BOOLEAN, BYTE -> 1;
                case SHORT, CHAR -> 2;
                case LONG, DOUBLE -> 8;
                default -> 4;
            };
            if (end - p < fixed) {
                throw new IllegalArgumentException("truncated record field " + name + ": " + (end - p) + " of its "
                        + fixed + " bytes");
            }
            pos[0] = p + fixed;
            switch (kind) {
                case BOOLEAN:
                    return src.get(ValueLayout.JAVA_BYTE, p) != 0;
                case BYTE:
                    return src.get(ValueLayout.JAVA_BYTE, p);
                case SHORT:
                    return src.get(Codecs.SHORT_LE, p);
                case CHAR:
                    return src.get(Codecs.CHAR_LE, p);
                case INT:
                    return src.get(Codecs.INT_LE, p);
                case FLOAT:
                    return src.get(Codecs.FLOAT_LE, p);
                case LONG:
                    return src.get(Codecs.LONG_LE, p);
                case DOUBLE:
                    return src.get(Codecs.DOUBLE_LE, p);
                case ENUM: {
                    int ordinal = src.get(Codecs.INT_LE, p);
                    if (ordinal == NULL) {
                        return null;
                    }
                    if (ordinal >= enumConstants.length) {
                        throw new IllegalArgumentException("record field " + name + ": enum " + type.getName()
                                + " has no constant of ordinal " + ordinal + " (it has " + enumConstants.length
                                + "; one added by a newer definition of the enum?)");
                    }
                    if (ordinal < 0) {
                        throw new IllegalArgumentException("record field " + name + ": bad enum ordinal " + ordinal);
                    }
                    return enumConstants[ordinal];
                }
                default:
                    break;
            }
            int n = src.get(Codecs.INT_LE, p);
            if (n == NULL) {
                return null;
            }
            if (n < 0) {
                throw new IllegalArgumentException("bad length " + n + " of record field " + name);
            }
            if (n > end - pos[0]) {
                throw new IllegalArgumentException("truncated record field " + name + ": length " + n + " but "
                        + (end - pos[0]) + " bytes left");
            }
            long start = pos[0];
            pos[0] = start + n;
            return switch (kind) {
                case STRING -> Codecs.Utf8.decode(src, start, n);
                case BYTES -> Codecs.BYTES.decode(src, start, n);
                case SEGMENT -> src.asSlice(start, n);
                case RECORD -> nested.decode(src, start, n);
                default -> throw new AssertionError(kind);
            };
        }
    }

}
