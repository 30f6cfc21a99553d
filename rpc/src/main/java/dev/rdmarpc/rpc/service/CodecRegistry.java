package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Which {@link Codec} a request or response type of a service method gets, and the
 * {@link MethodHandles.Lookup} the service is bound with. Immutable; {@link #with} returns a copy.
 * {@snippet :
 * CodecRegistry codecs = CodecRegistry.of(MethodHandles.lookup()).with(Point.class, POINT_CODEC);
 * }
 *
 * <p>A type's codec, first match wins:
 * <ol>
 * <li>one given with {@link #with} for exactly that class (for a primitive, the one given for its
 * wrapper);</li>
 * <li>the built-in one: {@code boolean}, {@code byte}, {@code short}, {@code char}, {@code int},
 * {@code long}, {@code float}, {@code double} and their wrappers ({@link Codecs#INT} and so on),
 * {@code String} ({@link Codecs#STRING}), {@code byte[]} ({@link Codecs#BYTES}),
 * {@link MemorySegment} ({@link Codecs#SEGMENT}, decoded as a view), {@code void} and
 * {@code Void} ({@link Codecs#VOID});</li>
 * <li>for a record, {@link Codecs#record(MethodHandles.Lookup, Class)} with this registry's lookup.</li>
 * </ol>
 * Anything else, generic types included ({@code List<String>}: wrap it in a record), has no codec:
 * binding the service fails with an {@link IllegalArgumentException} naming the method and type.
 */
public final class CodecRegistry {
    private final MethodHandles.Lookup lookup;
    private final Map<Class<?>, Codec<?>> explicit;

    private CodecRegistry(MethodHandles.Lookup lookup, Map<Class<?>, Codec<?>> explicit) {
        this.lookup = lookup;
        this.explicit = explicit;
    }

    /**
     * @param lookup the caller's {@code MethodHandles.lookup()}: builds record codecs (it must reach
     *               the records' accessors and constructors) and binds the service's interface, whose
     *               package it must have full access to (the interface's own module, or one it is
     *               opened to)
     * @return a registry with the built-in codecs only
     */
    public static CodecRegistry of(MethodHandles.Lookup lookup) {
        return new CodecRegistry(Objects.requireNonNull(lookup, "lookup"), Map.of());
    }

    /**
     * @param type  a request or response type, not primitive (give {@code Integer.class} for
     *              {@code int})
     * @param codec its codec, used instead of any built-in one
     * @param <T>   the type
     * @return a copy with this codec
     */
    public <T> CodecRegistry with(Class<T> type, Codec<T> codec) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(codec, "codec");
        if (type.isPrimitive()) {
            throw new IllegalArgumentException("register the codec of " + type + " under its wrapper class");
        }
        Map<Class<?>, Codec<?>> copy = new HashMap<>(explicit);
        copy.put(type, codec);
        return new CodecRegistry(lookup, Map.copyOf(copy));
    }

    /** @return the lookup given to {@link #of} */
    public MethodHandles.Lookup lookup() {
        return lookup;
    }

    /**
     * @param type a request or response type
     * @param <T>  the type
     * @return its codec, as the class comment says
     * @throws IllegalArgumentException when the type has no codec
     */
    @SuppressWarnings("unchecked")
    public <T> Codec<T> codec(Class<T> type) {
        return (Codec<T>) codecFor(Objects.requireNonNull(type, "type"));
    }

    /**
     * @return the codec of a generic {@code type}
     * @throws IllegalArgumentException when it has none, saying why
     */
    Codec<?> codecFor(Type type) {
        if (type instanceof Class<?> c) {
            Class<?> boxed = MethodType.methodType(c).wrap().returnType();
            Codec<?> codec = explicit.get(boxed);
            if (codec == null) {
                codec = builtIn(boxed);
            }
            if (codec == null && c.isRecord()) {
                try {
                    codec = Codecs.record(lookup, c.asSubclass(Record.class));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("record " + c.getName() + " has no codec: " + e.getMessage(), e);
                }
            }
            if (codec == null) {
                throw new IllegalArgumentException("type " + c.getName() + " has no codec: use a built-in type or a record,"
                        + " or give one with CodecRegistry.with(" + c.getSimpleName() + ".class, codec)");
            }
            return codec;
        }
        if (type instanceof ParameterizedType p) {
            throw new IllegalArgumentException("generic type " + p.getTypeName() + " has no codec: wrap it in a record");
        }
        throw new IllegalArgumentException("type " + type.getTypeName() + " has no codec: type variables, wildcards and"
                + " generic arrays are not supported");
    }

    private static Codec<?> builtIn(Class<?> c) {
        if (c == Integer.class) {
            return Codecs.INT;
        } else if (c == Long.class) {
            return Codecs.LONG;
        } else if (c == String.class) {
            return Codecs.STRING;
        } else if (c == byte[].class) {
            return Codecs.BYTES;
        } else if (c == MemorySegment.class) {
            return Codecs.SEGMENT;
        } else if (c == Void.class) {
            return Codecs.VOID;
        } else if (c == Boolean.class) {
            return Codecs.BOOLEAN;
        } else if (c == Byte.class) {
            return Codecs.BYTE;
        } else if (c == Short.class) {
            return Codecs.SHORT;
        } else if (c == Character.class) {
            return Codecs.CHAR;
        } else if (c == Float.class) {
            return Codecs.FLOAT;
        } else if (c == Double.class) {
            return Codecs.DOUBLE;
        }
        return null;
    }

    @Override
    public String toString() {
        return "CodecRegistry[" + lookup + ", explicit=" + explicit.keySet() + "]";
    }
}
