package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.core.ClientCore;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client: one connection to one server, multiplexing many outstanding calls matched by request
 * id and answered in any order.
 * {@snippet :
 * try (RpcClient client = RpcClient.connect(server.address())) {
 *     String r = client.call(ECHO, "hello");                       // blocking; cheap on virtual threads
 *     CompletableFuture<String> f = client.callAsync(ECHO, "hello");
 * }
 * }
 *
 * <p>Three ways to call:
 * <ul>
 * <li>{@link #call} blocks until the response (park a virtual thread, not a platform thread, when
 * you have many).</li>
 * <li>{@link #callAsync} returns a {@link CompletableFuture}, completed on the client's I/O thread
 * (dependent stages run there unless you use the {@code *Async} variants).</li>
 * <li>{@link #send} is the zero-allocation path for {@code MemorySegment} payloads: a preallocated
 * {@link ResponseListener} and a {@code long} tag, no future, no lambda per call.</li>
 * </ul>
 *
 * <p>Backpressure, two bounds, the same for every way to call: at most {@link Builder#maxOutstanding}
 * calls are outstanding, and at most 8 MiB of requests wait unsent on
 * the connection (plus the one frame that crossed the mark). When either bound is reached,
 * {@link #call} and {@link #exchange} wait for room until their deadline, then fail with
 * {@link Status#OVERLOADED}; {@link #callAsync} and {@link #exchangeAsync} fail at once with
 * {@link Status#OVERLOADED}; {@link #send} returns false. Nothing queues without bound. The client
 * always reads responses while it waits, so a slow server slows callers down but never locks the
 * connection.
 *
 * <p>Failure: when the connection closes, every pending call fails promptly with
 * {@link Status#CONNECTION_CLOSED}; this client does not reconnect (an {@link RpcClientPool} does).
 * A request longer than the maximum frame length fails with {@link Status#PAYLOAD_TOO_LARGE} before
 * anything is sent.
 *
 * <p>Thread-safe; the creator closes it.
 */
public final class RpcClient implements AutoCloseable {
    /**
     * Unsent request bytes on one connection at or above which a new call waits (blocking calls)
     * or is refused as overloaded (asynchronous ones).
     */
    static final long SEND_HIGH_WATER_MARK = 8L << 20;

    private final Transport transport;
    private final boolean ownsTransport;
    private final ClientCore core;
    private final Counters metrics;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RpcClient(Transport transport, boolean ownsTransport, ClientCore core, Counters metrics) {
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.core = core;
        this.metrics = metrics;
    }

    /**
     * Connects with the default settings.
     *
     * @param address the server's address
     * @return a connected client, owned by the caller
     * @throws RpcException {@link Status#UNAVAILABLE} when the server cannot be reached
     */
    public static RpcClient connect(InetSocketAddress address) {
        return builder().address(address).connect();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

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
    public <Q, R> R call(Method<Q, R> method, Q request) {
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
    public <Q, R> R call(Method<Q, R> method, Q request, Duration timeout) {
        return call(method, request, CallOptions.DEFAULT.withTimeout(timeout));
    }

    /**
     * Calls {@code method} with options and waits for its response.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and request attachment
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    public <Q, R> R call(Method<Q, R> method, Q request, CallOptions options) {
        ClientCore.PendingCall p = core.start(method, request, options.attachment(), options.responseAttachment(), options.timeoutNanos(), true, false);
        return ClientCore.await(p, core.effectiveTimeout(options.timeoutNanos()));
    }

    /**
     * Calls {@code method} with options, waits, and returns the response with its attachment.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and request attachment
     * @param <Q>     request type
     * @param <R>     response type
     * @return the response value and attachment (both owned by the caller)
     * @throws RpcException with the status of the failure
     */
    public <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options) {
        ClientCore.PendingCall p = core.start(method, request, options.attachment(), options.responseAttachment(), options.timeoutNanos(), true, true);
        return ClientCore.await(p, core.effectiveTimeout(options.timeoutNanos()));
    }

    /**
     * Calls {@code method} without waiting.
     *
     * @param method  the method
     * @param request the request
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request) {
        return callAsync(method, request, CallOptions.DEFAULT);
    }

    /**
     * Calls {@code method} with options without waiting.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and request attachment
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        CompletableFuture<R> f = (CompletableFuture) core.start(method, request, options.attachment(), options.responseAttachment(),
                options.timeoutNanos(), false, false);
        return f;
    }

    /**
     * Calls {@code method} with options without waiting; the future carries the response's
     * attachment too.
     *
     * @param method  the method
     * @param request the request
     * @param options timeout and request attachment
     * @param <Q>     request type
     * @param <R>     response type
     * @return a future completed with the reply or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        CompletableFuture<Reply<R>> f = (CompletableFuture) core.start(method, request, options.attachment(), options.responseAttachment(),
                options.timeoutNanos(), false, true);
        return f;
    }

    /**
     * The zero-allocation call: sends {@code payload} (all its bytes, copied straight into the frame)
     * as the request of {@code method}, with the default timeout and no attachment; the outcome goes
     * to {@code listener} with {@code tag}.
     *
     * @param method   the method; its codecs are not used, the payload is sent as is
     * @param payload  the request bytes; may be reused as soon as this returns
     * @param listener receives the response or the error, on the I/O thread
     * @param tag      any value, handed back to the listener
     * @return true when the call was sent (the listener will hear exactly once); false when
     *         {@link Builder#maxOutstanding} calls are outstanding or the send queue is full (nothing
     *         sent, the listener will not hear)
     * @throws RpcException {@link Status#CONNECTION_CLOSED} when the client is closed,
     *                      {@link Status#PAYLOAD_TOO_LARGE} when the frame would exceed the maximum,
     *                      {@link Status#RESOURCE_EXHAUSTED} when no buffer is free
     */
    public boolean send(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        return core.send(method, payload, MemorySegment.NULL, 0, listener, tag);
    }

    /**
     * The zero-copy call, for large payloads: as {@link #send(Method, MemorySegment, ResponseListener,
     * long)}, but the transport may write {@code payload} to the network straight from this memory
     * instead of copying it into its own buffers first (the TCP transport does so for native
     * segments of 16 KiB or more, with a gathering write behind the frame's header; smaller or heap
     * payloads, and the RDMA transport, copy as {@code send} does).
     *
     * <p>In return the payload must stay unchanged, and its memory alive, until the listener hears.
     * The listener never hears while the transport may still read it: a call that ends before its
     * request was all written (a timeout) has the unsent rest copied first. Sending the same
     * segment again while an earlier call with it is outstanding is fine; changing it is not. The
     * transport keeps a view of each segment for the next call with it (weakly: it never keeps the
     * memory alive), so sending from the same segments again allocates nothing of rdmarpc's; the
     * JDK's gathering write allocates a few small objects per write (docs/performance.md, 1c).
     *
     * @param method   the method; its codecs are not used, the payload is sent as is
     * @param payload  the request bytes; unchanged until the listener hears
     * @param listener receives the response or the error, on the I/O thread
     * @param tag      any value, handed back to the listener
     * @return as {@link #send(Method, MemorySegment, ResponseListener, long)}
     * @throws RpcException as {@link #send(Method, MemorySegment, ResponseListener, long)}
     */
    public boolean sendInPlace(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        return core.sendInPlace(method, payload, 0, listener, tag);
    }

    /**
     * The zero-allocation call with an attachment and a timeout.
     *
     * @param method       the method; its codecs are not used, the payload is sent as is
     * @param payload      the request bytes; may be reused as soon as this returns
     * @param attachment   bytes sent after the payload (copied before this returns), or
     *                     {@link MemorySegment#NULL}
     * @param timeoutNanos the call's timeout, or 0 for the default
     * @param listener     receives the response or the error, on the I/O thread
     * @param tag          any value, handed back to the listener
     * @return true when sent; false when back-pressured (see {@link #send(Method, MemorySegment,
     *         ResponseListener, long)})
     * @throws RpcException as {@link #send(Method, MemorySegment, ResponseListener, long)}
     */
    public boolean send(Method<?, ?> method, MemorySegment payload, MemorySegment attachment, long timeoutNanos,
                        ResponseListener listener, long tag) {
        return core.send(method, payload, attachment, timeoutNanos, listener, tag);
    }

    /** @return the server's address */
    public InetSocketAddress remoteAddress() {
        return core.remoteAddress();
    }

    /** @return true until the connection closes */
    public boolean isOpen() {
        return core.isOpen();
    }

    /** @return calls awaiting a response now */
    public int outstanding() {
        return core.outstanding();
    }

    /** @return the client's counters */
    public RpcMetrics metrics() {
        return metrics;
    }

    /** @return the buffer pool of the client's transport */
    public BufferPool bufferPool() {
        return transport.bufferPool();
    }

    /**
     * Closes the connection; pending calls fail with {@link Status#CONNECTION_CLOSED}. Closes the
     * transport too when the client created it. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        core.close();
        if (ownsTransport) {
            transport.close();
        }
    }

    /** Connects {@code core} through {@code t}; UNAVAILABLE when that fails. */
    static Connection connectCore(Transport t, ClientCore core, InetSocketAddress address, int maxFrameLength,
                                  Duration timeout) {
        try {
            Connection c = t.connect(address, maxFrameLength, core, timeout);
            core.attach(c);
            return c;
        } catch (ResourceExhaustedException e) {
            throw new RpcException(Status.RESOURCE_EXHAUSTED, "cannot connect to " + address + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "RpcClient[" + core.connection() + "]";
    }

    /** Settings of a client; {@link #connect()} validates them and connects. Not thread-safe. */
    public static final class Builder {
        private InetSocketAddress address;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration defaultTimeout = Duration.ofSeconds(30);
        private int maxOutstanding = 1024;
        private int maxFrameLength = FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH;
        private int ioThreads = 1;
        private BufferPool.Config bufferPool = new BufferPool.Config();
        private Transport transport;
        private RdmaConfig rdma;
        private Duration idleSpin = Duration.ZERO;

        private Builder() {
        }

        /**
         * Connects over RDMA with the default {@link RdmaConfig}, like coro_rpc's {@code init_ibv()}:
         * the same calls then travel over a reliable-connected queue pair. The server must have been
         * started with {@code rdma()}. Without this call nothing of RDMA is loaded.
         *
         * @return this
         */
        public Builder rdma() {
            return rdma(new RdmaConfig());
        }

        /**
         * Connects over RDMA with {@code config} (copied; validated by {@link #connect()}). The client
         * creates and owns the RDMA transport; {@link #ioThreads} and {@link #bufferPool} do not
         * apply, and {@link #transport(Transport)} cannot be combined.
         *
         * @param config the RDMA settings
         * @return this
         */
        public Builder rdma(RdmaConfig config) {
            this.rdma = Objects.requireNonNull(config, "config").copy();
            return this;
        }

        /**
         * @param address the server's address (required)
         * @return this
         */
        public Builder address(InetSocketAddress address) {
            this.address = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param timeout how long connecting may take; default 5 s
         * @return this
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * @param timeout timeout of calls that do not set their own; default 30 s
         * @return this
         */
        public Builder defaultTimeout(Duration timeout) {
            this.defaultTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * @param n most calls outstanding on the connection, in [1, 65536]; default 1024
         * @return this
         */
        public Builder maxOutstanding(int n) {
            this.maxOutstanding = n;
            return this;
        }

        /**
         * @param spin how long each event loop polls without sleeping after its last event, when the
         *             client creates its transport (see {@link TcpTransport.Config#idleStrategy}); default 0
         *             (sleep at once); 20-100 us where each side has cores of its own. Ignored with {@link #transport(Transport)}.
         * @return this
         */
        public Builder idleSpin(Duration spin) {
            this.idleSpin = Objects.requireNonNull(spin, "spin");
            return this;
        }

        /**
         * @param bytes the largest frame sent or accepted; default
         *              {@value FrameDescriptor#DEFAULT_MAX_FRAME_LENGTH}. Use the server's value.
         * @return this
         */
        public Builder maxFrameLength(int bytes) {
            this.maxFrameLength = bytes;
            return this;
        }

        /**
         * @param n event-loop threads when the client creates its transport; default 1. Ignored with
         *          {@link #transport(Transport)}.
         * @return this
         */
        public Builder ioThreads(int n) {
            this.ioThreads = n;
            return this;
        }

        /**
         * @param config buffer pool settings when the client creates its transport. Ignored with
         *               {@link #transport(Transport)}.
         * @return this
         */
        public Builder bufferPool(BufferPool.Config config) {
            this.bufferPool = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * @param transport a transport the caller owns (share one among many clients); default: the
         *                  client creates and owns a TCP transport
         * @return this
         */
        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * Validates the settings and connects.
         *
         * @return the connected client, owned by the caller
         * @throws RpcException {@link Status#UNAVAILABLE} when the server cannot be reached
         */
        public RpcClient connect() {
            if (address == null) {
                throw new IllegalArgumentException("address is required");
            }
            Settings.checkPositive("connectTimeout", connectTimeout);
            Settings.checkPositive("defaultTimeout", defaultTimeout);
            Settings.checkMaxFrame(maxFrameLength);
            RdmaSupport.checkExclusive(rdma, transport);
            boolean owns = transport == null;
            Transport t = !owns ? transport
                    : rdma != null ? RdmaSupport.create(rdma, "rdmarpc-client-rdma")
                    : TcpTransport.create(new TcpTransport.Config().ioThreads(ioThreads).bufferPool(bufferPool)
                            .idleStrategy(RpcServer.idleOf(idleSpin)).threadNamePrefix("rdmarpc-client"));
            try {
                Counters metrics = new Counters();
                ClientCore core = new ClientCore(metrics, maxOutstanding, maxFrameLength, defaultTimeout.toNanos(),
                        SEND_HIGH_WATER_MARK, t.name());
                Connection c = connectCore(t, core, address, maxFrameLength, connectTimeout);
                return new RpcClient(t, owns, core, metrics);
            } catch (RuntimeException e) {
                if (owns) {
                    t.close();
                }
                throw e;
            }
        }
    }
}
