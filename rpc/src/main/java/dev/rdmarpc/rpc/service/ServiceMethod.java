package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import java.lang.reflect.Type;

/**
 * One RPC method of a {@link ServiceDescriptor}: the Java method of the interface, the wire
 * {@link Method} it calls, and the shape of its signature. Immutable.
 *
 * <p>Signatures, with {@code Q} the request type and {@code R} the response type (each of which
 * must have a codec, see {@link CodecRegistry}):
 * <table class="striped">
 * <caption>Supported signatures</caption>
 * <tr><th>Java signature</th><th>{@link Kind}</th><th>client calls</th><th>server registers</th></tr>
 * <tr><td>{@code R m(Q request)}</td><td>{@code UNARY}</td><td>{@code channel.call}</td>
 *     <td>{@code registerBlocking}, or {@code register} with {@link RpcMethod#inline()}</td></tr>
 * <tr><td>{@code CompletableFuture<R> m(Q request)}</td><td>{@code UNARY_ASYNC}</td>
 *     <td>{@code channel.callAsync}</td><td>{@code registerAsync}</td></tr>
 * <tr><td>{@code Streaming<Q, R> m()}</td><td>{@code STREAM}</td>
 *     <td>{@code channel.openStream}, from {@link Streaming#open(CallOptions)}</td>
 *     <td>{@code registerStream}, with the handler of {@link Streaming#serve}</td></tr>
 * </table>
 * A unary method may take a {@link CallOptions} as its last parameter (timeout, metadata, attachments
 * for that call; the server's implementation receives {@link CallOptions#DEFAULT} there and reads its
 * call through {@link Services#context()}), and may take no request at all ({@code R m()},
 * {@code R m(CallOptions)}): the request is then {@link dev.rdmarpc.rpc.codec.Codecs#VOID}, no
 * bytes. A {@code void} (or {@code Void}) response is {@code Codecs.VOID} too. A streaming method
 * takes no parameters (the messages go through the stream, the options through
 * {@link Streaming#open(CallOptions)}); its {@code Q} and {@code R} are the client's and the server's
 * message types, with codecs as requests and responses get them.
 */
public final class ServiceMethod {
    /** The shape of a method's signature. */
    public enum Kind {
        /** One request, one response, the caller waits: {@code R m(Q)}. */
        UNARY,
        /** One request, one response, the caller gets a future: {@code CompletableFuture<R> m(Q)}. */
        UNARY_ASYNC,
        /**
         * A stream, any number of messages each way (server streaming, client streaming and
         * bidirectional are ways of using it): {@code Streaming<Q, R> m()}.
         */
        STREAM
    }

    private final java.lang.reflect.Method javaMethod;
    private final Method<Object, Object> method;
    private final Kind kind;
    private final boolean inline;
    private final Type requestType;
    private final Type responseType;
    /** The parameter holding the request, or -1 when there is none (a VOID request). */
    final int requestIndex;
    /** The parameter holding the CallOptions, or -1 when there is none. */
    final int optionsIndex;

    ServiceMethod(java.lang.reflect.Method javaMethod, Method<Object, Object> method, Kind kind, boolean inline,
                  Type requestType, Type responseType, int requestIndex, int optionsIndex) {
        this.javaMethod = javaMethod;
        this.method = method;
        this.kind = kind;
        this.inline = inline;
        this.requestType = requestType;
        this.responseType = responseType;
        this.requestIndex = requestIndex;
        this.optionsIndex = optionsIndex;
    }

    /** @return the interface's method */
    public java.lang.reflect.Method javaMethod() {
        return javaMethod;
    }

    /**
     * The wire method: named {@code service + "/" + method}, with the codecs of the request and
     * response types. A hand-written {@code Method.of} with the same name and codecs calls or serves
     * the same method.
     *
     * @return the method descriptor
     */
    public Method<?, ?> method() {
        return method;
    }

    /** The wire method with its types erased, for the client and the server binding. */
    Method<Object, Object> erased() {
        return method;
    }

    /** @return the signature's shape */
    public Kind kind() {
        return kind;
    }

    /** @return true when the server runs it on the I/O thread ({@link RpcMethod#inline()}) */
    public boolean inline() {
        return inline;
    }

    /**
     * @return the request type ({@code Void} when the method takes no request); for a
     *         {@link Kind#STREAM}, the client's message type {@code Q}
     */
    public Type requestType() {
        return requestType;
    }

    /**
     * @return the response type, the future's type argument for {@link Kind#UNARY_ASYNC}; for a
     *         {@link Kind#STREAM}, the server's message type {@code R}
     */
    public Type responseType() {
        return responseType;
    }

    @Override
    public String toString() {
        return "ServiceMethod[" + method.name() + ", " + kind + (inline ? ", inline" : "") + ", " + javaMethod + "]";
    }
}
