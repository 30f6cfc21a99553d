package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A typed method descriptor: a name, the codec of its request and the codec of its response. Define
 * one as a constant shared by client and server:
 * {@snippet :
 * static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
 * }
 *
 * <p>On the wire a method is identified by {@link #id()}, the 32-bit FNV-1a hash of its name
 * ({@link FrameDescriptor#methodId(String)}); a server refuses to register two names with the same
 * id. Immutable and thread-safe.
 *
 * @param <Q> request type
 * @param <R> response type
 */
public final class Method<Q, R> {
    private final String name;
    private final int id;
    private final Codec<Q> requestCodec;
    private final Codec<R> responseCodec;

    private Method(String name, Codec<Q> requestCodec, Codec<R> responseCodec) {
        this.name = Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("method name must not be empty");
        }
        this.id = FrameDescriptor.methodId(name);
        this.requestCodec = Objects.requireNonNull(requestCodec, "requestCodec");
        this.responseCodec = Objects.requireNonNull(responseCodec, "responseCodec");
    }

    /**
     * @param name          the method name, not empty
     * @param requestCodec  codec of the request
     * @param responseCodec codec of the response
     * @param <Q>           request type
     * @param <R>           response type
     * @return the descriptor
     */
    public static <Q, R> Method<Q, R> of(String name, Codec<Q> requestCodec, Codec<R> responseCodec) {
        return new Method<>(name, requestCodec, responseCodec);
    }

    /**
     * A method whose request and response are raw bytes ({@link Codecs#SEGMENT}): the form of the
     * zero-allocation paths ({@link RpcClient#send}, {@link RawHandler}).
     *
     * @param name the method name, not empty
     * @return the descriptor
     */
    public static Method<MemorySegment, MemorySegment> raw(String name) {
        return new Method<>(name, Codecs.SEGMENT, Codecs.SEGMENT);
    }

    /** @return the method name */
    public String name() {
        return name;
    }

    /** @return the wire id: FNV-1a of the name */
    public int id() {
        return id;
    }

    /** @return the request codec */
    public Codec<Q> requestCodec() {
        return requestCodec;
    }

    /** @return the response codec */
    public Codec<R> responseCodec() {
        return responseCodec;
    }

    @Override
    public String toString() {
        return "Method[" + name + ", id=0x" + Integer.toHexString(id) + "]";
    }
}
