package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.StreamHandler;
import java.util.Objects;

/**
 * A streaming method of an {@link RpcService} interface, declared with no parameters:
 * {@snippet :
 * @RpcService
 * interface Chat {
 *     Streaming<Line, Line> chat();          // wire name "Chat/chat"; Q = Line (client's), R = Line (server's)
 * }
 * }
 * Its value is one side of the method, as the streaming call's two ends are
 * ({@link ClientStream}, {@link dev.rdmarpc.rpc.ServerStream}):
 * <ul>
 * <li><b>A client's</b> ({@link Services#client}): {@code chat()} returns this method bound to the
 * client's channel, the same object each time (built with the client: the call allocates nothing).
 * {@link #open()} and {@link #open(CallOptions)} open a stream,
 * {@code channel.openStream(method, options)}; what a stream may do and costs is
 * {@link ClientStream}'s.
 * {@snippet :
 * try (ClientStream<Line, Line> s = chat.chat().open(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)))) {
 *     s.send(new Line("ada", "hi"));
 *     s.halfClose();
 *     for (Line l; (l = s.receive()) != null; ) { ... }
 * }
 * }</li>
 * <li><b>The server's</b>: the implementation returns {@link #serve(StreamHandler)}, the method's
 * handler. {@link Services#register} calls {@code chat()} once, at registration, and registers the
 * handler with {@code RpcServer.Builder.registerStream}: it serves every stream of the method, each
 * on a virtual thread of its own, where {@link Services#context()} is the stream (so is the handler's
 * {@code ServerStream}, a {@link dev.rdmarpc.rpc.CallContext}).
 * {@snippet :
 * public Streaming<Line, Line> chat() {
 *     return Streaming.serve(stream -> {
 *         for (Line l; (l = stream.receive()) != null; ) {
 *             stream.send(new Line("echo", l.text()));
 *         }
 *     });                                       // returning ends the stream with OK
 * }
 * }</li>
 * </ul>
 * {@code Q} and {@code R} get their codecs as a unary method's request and response types do
 * ({@link CodecRegistry}); the three shapes (server streaming, client streaming, bidirectional) are
 * ways of using one stream. A message is never null; a {@code Void} message type ({@code Codecs.VOID})
 * is for the side that sends no messages at all, such as the client of a server stream that needs no
 * request: it only half-closes.
 *
 * <p>A hand-written {@code Method.of("Chat/chat", codecQ, codecR)} with {@code openStream} or
 * {@code registerStream} is the same method on the wire.
 *
 * <p>Implement it yourself only as a client-side stand-in in tests (it has one abstract method,
 * {@link #open(CallOptions)}, so a lambda will do): registration accepts only what {@link #serve}
 * returns. The library's two kinds are immutable and thread-safe.
 *
 * @param <Q> the client's message type
 * @param <R> the server's message type
 */
public interface Streaming<Q, R> {
    /**
     * Opens a stream of this method with {@link CallOptions#DEFAULT} (no deadline, no metadata).
     *
     * @return the stream, open; close it (or read it to its end)
     * @throws dev.rdmarpc.rpc.RpcException when it cannot be opened (see
     *                                      {@link dev.rdmarpc.rpc.RpcChannel#openStream})
     * @throws IllegalStateException        on the server's side ({@link #serve}), which opens nothing
     */
    default ClientStream<Q, R> open() {
        return open(CallOptions.DEFAULT);
    }

    /**
     * Opens a stream of this method: {@code options}' timeout is the stream's deadline, its metadata
     * travels with the opening (attachments are refused, as by
     * {@link dev.rdmarpc.rpc.RpcChannel#openStream(dev.rdmarpc.rpc.Method, CallOptions)}).
     *
     * @param options deadline and metadata
     * @return the stream, open; close it (or read it to its end)
     * @throws dev.rdmarpc.rpc.RpcException when it cannot be opened
     * @throws IllegalStateException        on the server's side ({@link #serve}), which opens nothing
     */
    ClientStream<Q, R> open(CallOptions options);

    /**
     * The server's side of a streaming method: what its implementation returns.
     *
     * @param handler serves each stream, on a virtual thread of its own (see {@link StreamHandler})
     * @param <Q>     the client's message type
     * @param <R>     the server's message type
     * @return a value that {@link Services#register} takes the handler from; {@link #open} on it throws
     *         {@link IllegalStateException}
     */
    static <Q, R> Streaming<Q, R> serve(StreamHandler<Q, R> handler) {
        return new ServedStreaming<>(Objects.requireNonNull(handler, "handler"));
    }
}
