package dev.rdmarpc.rpc;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Where calls go: one server, reached over one connection ({@link RpcClient}) or over the
 * connections a pool keeps to it ({@link RpcClientPool#channel}). Code that makes calls takes an
 * {@code RpcChannel} and does not care which.
 * {@snippet :
 * RpcChannel channel = RpcClient.connect(server.address());    // or pool.channel(server.address())
 * String r = channel.call(ECHO, "hello");                        // blocking; cheap on virtual threads
 * CompletableFuture<String> f = channel.callAsync(ECHO, "hello");
 * }
 *
 * <p>Three ways to call:
 * <ul>
 * <li>{@link #call} and {@link #exchange} block until the response (park a virtual thread, not a
 * platform thread, when you have many).</li>
 * <li>{@link #callAsync} and {@link #exchangeAsync} return a {@link CompletableFuture}, completed on
 * an I/O thread (dependent stages run there unless you use the {@code *Async} variants).</li>
 * <li>{@link #send} and {@link #sendInPlace} are the zero-allocation path for
 * {@code MemorySegment} payloads: a preallocated {@link ResponseListener} and a {@code long} tag,
 * no future, no lambda per call.</li>
 * </ul>
 * The {@code exchange} variants also carry attachments both ways ({@link CallOptions}, {@link Reply}).
 *
 * <p>Backpressure, the same for every way to call: a connection has at most {@code maxOutstanding}
 * calls outstanding and at most 8 MiB of requests waiting unsent (plus the one frame that crossed
 * the mark). When a bound is reached, {@link #call} and {@link #exchange} wait for room until their
 * deadline, then fail with {@link Status#OVERLOADED}; {@link #callAsync} and {@link #exchangeAsync}
 * fail at once with {@link Status#OVERLOADED}; {@link #send} returns false. Calls waiting for room in
 * the send queue get it in the order they came (and a blocking call that finds others waiting queues
 * behind them, with a stream's messages); an asynchronous call never waits, so it may take room that
 * frees while blocking calls wait. Nothing queues without bound. Responses are always read while callers wait, so a slow server slows callers down but
 * never locks a connection.
 *
 * <p>A buffer of the caller's that a call's response attachment lands in
 * ({@link CallOptions#withResponseAttachment}, with {@link #exchange} or {@link #exchangeAsync}):
 * <ul>
 * <li><b>Ownership.</b> From the call until it completes the buffer is the call's: nothing else may
 * read or write it. Once the call completed (with its response, an error or a cancel) it is the
 * caller's again: nothing of rdmarpc writes it after, and it may be reused for the next call at
 * once.</li>
 * <li><b>How it is filled.</b> Over TCP, and over RDMA for a response below the rendezvous threshold
 * (1 MiB by default) or a buffer outside memory registered with the client's transport, the
 * attachment is copied into it once the frame arrived ({@link RpcMetrics#responseAttachmentBytesCopied()}
 * counts those bytes). Over RDMA, a response at or above the threshold into memory registered with
 * the client's transport ({@code RdmaTransport.register}) is written there by the NIC (RDMA READ):
 * nothing is copied.</li>
 * <li><b>Too small.</b> A response attachment longer than the buffer fails the call with
 * {@link Status#PAYLOAD_TOO_LARGE}; the buffer is not written, and the connection goes on.</li>
 * <li><b>Cancel and deadline.</b> Until the transport starts writing the buffer, a cancel or the
 * call's deadline ends the call at once and nothing writes the buffer afterwards. Once it started
 * (the response is arriving), the call ends with that response: a cancel returns false and does
 * nothing, and a deadline that passes meanwhile waits for the attachment to be in place. If the
 * connection fails meanwhile the call fails with {@link Status#CONNECTION_CLOSED} once the NIC can
 * no longer write the buffer (over RDMA: its queue pair destroyed).</li>
 * </ul>
 *
 * <p>A call without a timeout of its own gets the {@code defaultTimeout} of the builder that made
 * the channel (a stream its {@code defaultStreamTimeout}). The deadline starts when the call is made
 * and bounds all its waits, a pool's connection being opened included; a call that passes it fails
 * with {@link Status#DEADLINE_EXCEEDED}. A request longer than the maximum frame length fails with
 * {@link Status#PAYLOAD_TOO_LARGE} before anything is sent.
 *
 * <p>Thread-safe. Who closes it: the creator of an {@link RpcClient}; a pool's channels close with
 * their pool.
 */
public interface RpcChannel {
    /**
     * Calls {@code method} and waits for its response, up to the default timeout.
     *
     * @param method  the method
     * @param request the request
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response (for a view codec, a copy the caller owns)
     * @throws RpcException with the status of the failure
     */
    default <Q, R> R call(Method<Q, R> method, Q request) {
        return call(method, request, CallOptions.DEFAULT);
    }

    /**
     * Calls {@code method} and waits for its response, up to {@code timeout}.
     *
     * @param method  the method
     * @param request the request
     * @param timeout how long to wait, positive
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    default <Q, R> R call(Method<Q, R> method, Q request, Duration timeout) {
        return call(method, request, CallOptions.DEFAULT.withTimeout(timeout));
    }

    /**
     * Calls {@code method} with options and waits for its response.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and attachments
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    <Q, R> R call(Method<Q, R> method, Q request, CallOptions options);

    /**
     * Calls {@code method} with options, waits, and returns the response with its attachment.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and attachments
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response value and attachment (both owned by the caller)
     * @throws RpcException with the status of the failure
     */
    <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options);

    /**
     * Calls {@code method} without waiting, with the default timeout.
     *
     * @param method  the method
     * @param request the request
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the response or an {@link RpcException}; its
     *         {@code cancel} ends the call at once and tells the server, whose blocking handler, if
     *         still running, is interrupted (see {@link CallContext#isCancelled()})
     * @throws RpcException when the call cannot start: {@link Status#CONNECTION_CLOSED},
     *                      {@link Status#PAYLOAD_TOO_LARGE}, {@link Status#UNAVAILABLE} (a pool that
     *                      cannot connect)
     */
    default <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request) {
        return callAsync(method, request, CallOptions.DEFAULT);
    }

    /**
     * Calls {@code method} with options without waiting.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and attachments
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the response or an {@link RpcException}
     * @throws RpcException as {@link #callAsync(Method, Object)}
     */
    <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options);

    /**
     * Calls {@code method} with options without waiting; the future carries the response's
     * attachment too.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and attachments
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the reply or an {@link RpcException}
     * @throws RpcException as {@link #callAsync(Method, Object)}
     */
    <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options);

    /**
     * The zero-allocation call: sends {@code payload} (all its bytes, copied straight into the frame)
     * as the request of {@code method}, with the default timeout and no attachment; the outcome goes
     * to {@code listener} with {@code tag}.
     *
     * @param method   the method; its codecs are not used, the payload is sent as is
     * @param payload  the request bytes; may be reused as soon as this returns
     * @param listener receives the response or the error, on an I/O thread
     * @param tag      any value, handed back to the listener
     * @return true when the call was sent (the listener will hear exactly once); false when
     *         {@code maxOutstanding} calls are outstanding or the send queue is full (nothing sent,
     *         the listener will not hear)
     * @throws RpcException {@link Status#CONNECTION_CLOSED} when the channel is closed,
     *                      {@link Status#PAYLOAD_TOO_LARGE} when the frame would exceed the maximum,
     *                      {@link Status#RESOURCE_EXHAUSTED} when no buffer is free,
     *                      {@link Status#UNAVAILABLE} when a pool cannot connect
     */
    default boolean send(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        return send(method, payload, MemorySegment.NULL, 0, listener, tag);
    }

    /**
     * The zero-allocation call with an attachment and a timeout.
     *
     * <p>The response's attachment reaches the listener in place, a view of the transport's buffer
     * ({@link ResponseView#attachment()}, valid during the callback): nothing is copied for it, and no
     * memory of the caller's is written. To have a large response land in a buffer of your own
     * (written by the NIC over RDMA, without a copy), call {@link #exchange} or {@link #exchangeAsync}
     * with {@link CallOptions#withResponseAttachment}; the class description gives that buffer's
     * contract.
     *
     * @param method       the method; its codecs are not used, the payload is sent as is
     * @param payload      the request bytes; may be reused as soon as this returns
     * @param attachment   bytes sent after the payload, or {@link MemorySegment#NULL}: copied before
     *                     this returns, except over RDMA when they lie in memory registered with the
     *                     client's transport (at least 4 KiB): the NIC then reads them where they lie,
     *                     and they must stay unchanged until the response arrives or, for a call that
     *                     ends without one, as {@link dev.rdmarpc.rpc.transport.rdma.RegisteredMemory}
     *                     says
     * @param timeoutNanos the call's timeout, or 0 for the default
     * @param listener     receives the response or the error, on an I/O thread
     * @param tag          any value, handed back to the listener
     * @return true when sent; false when back-pressured (see
     *         {@link #send(Method, MemorySegment, ResponseListener, long)})
     * @throws RpcException as {@link #send(Method, MemorySegment, ResponseListener, long)}
     */
    boolean send(Method<?, ?> method, MemorySegment payload, MemorySegment attachment, long timeoutNanos,
                 ResponseListener listener, long tag);

    /**
     * The zero-allocation call with request metadata: as
     * {@link #send(Method, MemorySegment, MemorySegment, long, ResponseListener, long)}, with
     * {@code metadata} written into the frame ahead of the payload. Build the {@link Metadata} once
     * and send it with every call: writing it allocates nothing. The listener reads the response's
     * metadata in place ({@link ResponseView#metadata()}). Client interceptors do not run on this
     * path.
     *
     * @param metadata the request metadata, within the client's {@code maxMetadataBytes}
     * @return as {@link #send(Method, MemorySegment, ResponseListener, long)}
     * @throws RpcException as {@link #send(Method, MemorySegment, ResponseListener, long)}, and
     *                      {@link Status#PAYLOAD_TOO_LARGE} when {@code metadata} is over the limit
     */
    default boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                         long timeoutNanos, ResponseListener listener, long tag) {
        if (!metadata.isEmpty()) {
            throw new UnsupportedOperationException(getClass().getName() + " does not send metadata on the raw path");
        }
        return send(method, payload, attachment, timeoutNanos, listener, tag);
    }

    /**
     * The zero-copy call, for large payloads: as {@link #send(Method, MemorySegment, ResponseListener,
     * long)}, but the transport may write {@code payload} to the network straight from this memory
     * instead of copying it into its own buffers first (the TCP transport does so for native
     * segments of 16 KiB or more, with a gathering write behind the frame's header; smaller or heap
     * payloads, and the RDMA transport, copy as {@code send} does).
     *
     * <p>In return the payload must stay unchanged, and its memory alive, until the listener hears,
     * and it must be memory any thread may access (heap, or a global, automatic or shared arena's):
     * the I/O thread reads it. The listener never hears while the transport may still read it: a
     * call that ends before its request was all written (a timeout) has the unsent rest copied
     * first. Sending the same segment again while an earlier call with it is outstanding is fine;
     * changing it is not. The transport keeps a view of each segment for the next call with it
     * (weakly: it never keeps the memory alive), so sending from the same segments again allocates
     * nothing of rdmarpc's; the JDK's gathering write allocates a few small objects per write
     * (docs/performance-archive.md, 1c).
     *
     * @param method   the method; its codecs are not used, the payload is sent as is
     * @param payload  the request bytes; unchanged until the listener hears
     * @param listener receives the response or the error, on an I/O thread
     * @param tag      any value, handed back to the listener
     * @return as {@link #send(Method, MemorySegment, ResponseListener, long)}
     * @throws IllegalArgumentException when {@code payload} is confined to a thread (a confined
     *                                  arena's): nothing is sent, use {@link #send} for such memory
     * @throws RpcException             as {@link #send(Method, MemorySegment, ResponseListener, long)}
     */
    boolean sendInPlace(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag);

    /**
     * Opens a streaming call of {@code method} with no deadline (see {@link ClientStream}). The
     * server must have registered the method with {@code registerStream}.
     *
     * @param method the method
     * @param <Q>    request message type
     * @param <R>    response message type
     * @return the stream, open; close it (or read it to its end)
     * @throws RpcException when it cannot be opened: CONNECTION_CLOSED, OVERLOADED (no free call slot),
     *                      DEADLINE_EXCEEDED (no connection opened in time)
     */
    default <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method) {
        return openStream(method, CallOptions.DEFAULT);
    }

    /**
     * Opens a streaming call of {@code method}: its deadline is {@code options}' timeout if it has
     * one, else the builder's {@code defaultStreamTimeout} (30 s; give a long-lived stream a longer
     * timeout of its own, or none with {@link CallOptions#withoutDeadline}), counted from now: waiting for a pool's connection, a call slot and send
     * room come out of it, and past it the stream fails with DEADLINE_EXCEEDED. Its opening carries {@code options}' metadata; an attachment is not allowed. A stream holds one of
     * the connection's call slots until it ends. The server answers a method it serves as a unary
     * call, or does not know, by ending the stream with PROTOCOL_ERROR or UNKNOWN_METHOD, which
     * {@link ClientStream#receive} reports.
     *
     * @param method  the method
     * @param options deadline and metadata
     * @param <Q>     request message type
     * @param <R>     response message type
     * @return the stream, open
     * @throws RpcException when it cannot be opened: CONNECTION_CLOSED, OVERLOADED (no free call slot),
     *                      DEADLINE_EXCEEDED (no connection opened in time)
     */
    <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, CallOptions options);
    /**
     * Opens a streaming call of {@code method} that holds no thread (see {@link AsyncClientStream}):
     * as {@link #openStream(Method, CallOptions)} on the wire, with {@code listener} told of the
     * server's messages (as they are requested), of readiness and of the end, on the connection's
     * I/O thread. It does not wait for a call slot or for room in the send queue (the opening frame
     * waits in the stream if the queue is full); a pool that has no connection open yet is the
     * exception: it waits for one, up to the stream's deadline.
     *
     * @param method   the streaming method
     * @param options  as for {@link #openStream(Method, CallOptions)}
     * @param listener told what happens on the stream (see {@link StreamListener} for its threads)
     * @return the stream, opening
     * @throws RpcException when it cannot open now: CONNECTION_CLOSED, OVERLOADED (every call slot
     *                      of the connection is held), PAYLOAD_TOO_LARGE (metadata); the listener is
     *                      then not told
     */
    default <Q, R> AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, CallOptions options,
                                                           StreamListener<? super R> listener) {
        return openAsyncStream(method, options, listener, null);
    }

    /**
     * As {@link #openAsyncStream(Method, CallOptions, StreamListener)}, with the listener told on
     * {@code executor} (one task at a time per stream, in order) instead of the I/O thread; null
     * for the I/O thread.
     */
    <Q, R> AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, CallOptions options,
                                                   StreamListener<? super R> listener,
                                                   java.util.concurrent.Executor executor);
}
