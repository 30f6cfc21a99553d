package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.core.ClientCore;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A pool of client connections to any number of endpoints, sharing one transport (one set of I/O
 * threads, one buffer pool).
 * {@snippet :
 * try (RpcClientPool pool = RpcClientPool.builder().maxConnectionsPerEndpoint(4).build()) {
 *     String r = pool.call(server.address(), ECHO, "hello");
 * }
 * }
 *
 * <p>Each call goes to the endpoint's open connection with the fewest outstanding calls; a new
 * connection is opened only when every open one has at least
 * {@link Builder#maxOutstandingPerConnection} / 2 outstanding and the endpoint has fewer than
 * {@link Builder#maxConnectionsPerEndpoint} connections. A connection that failed is dropped, and
 * the next call reconnects (after {@link Builder#reconnectBackoff} since the last failed attempt; a
 * call inside that window fails with {@link Status#UNAVAILABLE}). Connections idle for
 * {@link Builder#idleTimeout} (no outstanding call, none started) are closed.
 *
 * <p>Exhaustion: when every connection of the endpoint is open and full
 * ({@code maxConnectionsPerEndpoint x maxOutstandingPerConnection} calls outstanding), {@link #call}
 * waits for a free slot within its timeout, then fails with {@link Status#OVERLOADED};
 * {@link #callAsync} fails at once with {@link Status#OVERLOADED}; {@link #send} returns false.
 *
 * <p>Thread-safe; the creator closes it.
 */
public final class RpcClientPool implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcClientPool.class.getName());

    private final Transport transport;
    private final boolean ownsTransport;
    private final Counters metrics = new Counters();
    private final int maxConnections;
    private final int maxOutstanding;
    private final long idleTimeoutNanos;
    private final long backoffNanos;
    private final Duration connectTimeout;
    private final long defaultTimeoutNanos;
    private final int maxFrameLength;
    private final ConcurrentHashMap<InetSocketAddress, Endpoint> endpoints = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper;
    private volatile boolean closed;

    private RpcClientPool(Builder b, Transport transport, boolean owns) {
        this.transport = transport;
        this.ownsTransport = owns;
        this.maxConnections = b.maxConnections;
        this.maxOutstanding = b.maxOutstanding;
        this.idleTimeoutNanos = b.idleTimeout.toNanos();
        this.backoffNanos = b.reconnectBackoff.toNanos();
        this.connectTimeout = b.connectTimeout;
        this.defaultTimeoutNanos = b.defaultTimeout.toNanos();
        this.maxFrameLength = b.maxFrameLength;
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rdmarpc-pool-reaper");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(10), idleTimeoutNanos / 4);
        reaper.scheduleWithFixedDelay(this::closeIdle, period, period, TimeUnit.NANOSECONDS);
    }

    /**
     * The connections of one endpoint: a copy-on-write array changed by compare-and-set (so an I/O
     * thread removing a closed connection never waits); the lock only serializes connecting.
     */
    private final class Endpoint {
        final InetSocketAddress address;
        final ReentrantLock lock = new ReentrantLock();
        final AtomicReference<ClientCore[]> connections = new AtomicReference<>(new ClientCore[0]);
        long lastFailureNanos;
        String lastFailure;
        boolean failedOnce;

        Endpoint(InetSocketAddress address) {
            this.address = address;
        }

        /** The least loaded open connection, opening one when all are busy and the limit allows. */
        ClientCore pick() {
            ClientCore best = leastLoaded();
            if (best != null && (best.outstandingHint() < maxOutstanding / 2 || connections.get().length >= maxConnections)) {
                return best;
            }
            lock.lock();
            try {
                best = leastLoaded();
                if (best != null && (best.outstandingHint() < maxOutstanding / 2 || connections.get().length >= maxConnections)) {
                    return best;
                }
                if (closed) {
                    throw new RpcException(Status.CONNECTION_CLOSED, "client pool is closed");
                }
                long now = System.nanoTime();
                if (failedOnce && now - lastFailureNanos < backoffNanos) {
                    if (best != null) {
                        return best;
                    }
                    throw new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + " (retrying after "
                            + TimeUnit.NANOSECONDS.toMillis(backoffNanos) + " ms): " + lastFailure);
                }
                ClientCore core = new ClientCore(metrics, maxOutstanding, maxFrameLength, defaultTimeoutNanos,
                        RpcClient.SEND_HIGH_WATER_MARK, transport.name());
                try {
                    RpcClient.connectCore(transport, core, address, maxFrameLength, connectTimeout);
                } catch (RpcException e) {
                    failedOnce = true;
                    lastFailureNanos = now;
                    lastFailure = e.getMessage();
                    if (best != null) {
                        return best;
                    }
                    throw e;
                }
                failedOnce = false;
                core.onClosed(() -> remove(core));
                ClientCore[] old;
                ClientCore[] next;
                do {
                    old = connections.get();
                    next = Arrays.copyOf(old, old.length + 1);
                    next[old.length] = core;
                } while (!connections.compareAndSet(old, next));
                if (!core.isOpen()) { // closed before the listener was installed
                    remove(core);
                }
                return core;
            } finally {
                lock.unlock();
            }
        }

        private ClientCore leastLoaded() {
            ClientCore best = null;
            int bestLoad = Integer.MAX_VALUE;
            for (ClientCore c : connections.get()) {
                int load = c.outstandingHint();
                if (load < bestLoad && c.isOpen()) {
                    best = c;
                    bestLoad = load;
                }
            }
            return best;
        }

        void remove(ClientCore core) {
            while (true) {
                ClientCore[] old = connections.get();
                int i = Arrays.asList(old).indexOf(core);
                if (i < 0) {
                    return;
                }
                ClientCore[] next = new ClientCore[old.length - 1];
                System.arraycopy(old, 0, next, 0, i);
                System.arraycopy(old, i + 1, next, i, old.length - i - 1);
                if (connections.compareAndSet(old, next)) {
                    return;
                }
            }
        }

        void closeIdle(long now) {
            for (ClientCore c : connections.get()) {
                if (c.outstandingHint() == 0 && now - c.lastActivityNanos() > idleTimeoutNanos) {
                    remove(c);
                    LOG.log(System.Logger.Level.DEBUG, "closing idle connection to {0}", address);
                    c.close();
                }
            }
        }

        void closeAll() {
            for (ClientCore c : connections.get()) {
                c.close();
            }
        }
    }

    private Endpoint endpoint(InetSocketAddress address) {
        Objects.requireNonNull(address, "endpoint");
        if (closed) {
            throw new RpcException(Status.CONNECTION_CLOSED, "client pool is closed");
        }
        return endpoints.computeIfAbsent(address, Endpoint::new);
    }

    private void closeIdle() {
        long now = System.nanoTime();
        for (Endpoint e : endpoints.values()) {
            try {
                e.closeIdle(now);
            } catch (RuntimeException ex) {
                LOG.log(System.Logger.Level.WARNING, "closing idle connections failed", ex);
            }
        }
    }

    /** Runs {@code attempt} on a picked connection, once more on another if it closed under us. */
    private <T> T withConnection(InetSocketAddress address, java.util.function.Function<ClientCore, T> attempt) {
        Endpoint e = endpoint(address);
        for (int tries = 0; ; tries++) {
            ClientCore c = e.pick();
            try {
                return attempt.apply(c);
            } catch (RpcException ex) {
                if (ex.status() != Status.CONNECTION_CLOSED || tries >= 1 || closed) {
                    throw ex;
                }
                e.remove(c);
            }
        }
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Blocking call through the pool, with the default timeout.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param <Q>      request type
     * @param <R>      response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    public <Q, R> R call(InetSocketAddress endpoint, Method<Q, R> method, Q request) {
        return call(endpoint, method, request, CallOptions.DEFAULT);
    }

    /**
     * Blocking call through the pool with options.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param options  timeout and attachment
     * @param <Q>      request type
     * @param <R>      response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    public <Q, R> R call(InetSocketAddress endpoint, Method<Q, R> method, Q request, CallOptions options) {
        ClientCore.PendingCall p = withConnection(endpoint,
                c -> c.start(method, request, options.attachment(), options.responseAttachment(), options.timeoutNanos(), true, false));
        long timeout = options.timeoutNanos() > 0 ? options.timeoutNanos() : defaultTimeoutNanos;
        return ClientCore.await(p, timeout);
    }

    /**
     * Asynchronous call through the pool.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param <Q>      request type
     * @param <R>      response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(InetSocketAddress endpoint, Method<Q, R> method, Q request) {
        return callAsync(endpoint, method, request, CallOptions.DEFAULT);
    }

    /**
     * Asynchronous call through the pool with options.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param options  timeout and attachment
     * @param <Q>      request type
     * @param <R>      response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(InetSocketAddress endpoint, Method<Q, R> method, Q request,
                                                 CallOptions options) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        CompletableFuture<R> f = (CompletableFuture) withConnection(endpoint,
                c -> c.start(method, request, options.attachment(), options.responseAttachment(), options.timeoutNanos(), false, false));
        return f;
    }

    /**
     * Zero-allocation call through the pool (see {@link RpcClient#send}). Opening a new connection,
     * when one is needed, blocks and allocates.
     *
     * @param endpoint the server
     * @param method   the method
     * @param payload  the request bytes
     * @param listener receives the outcome on an I/O thread
     * @param tag      handed back to the listener
     * @return true when sent; false when every connection of the endpoint is full
     * @throws RpcException as {@link RpcClient#send}, and {@link Status#UNAVAILABLE} when no
     *                      connection can be made
     */
    public boolean send(InetSocketAddress endpoint, Method<?, ?> method, MemorySegment payload,
                        ResponseListener listener, long tag) {
        return withConnection(endpoint, c -> c.send(method, payload, MemorySegment.NULL, 0, listener, tag));
    }

    /**
     * Zero-copy call through the pool (see {@link RpcClient#sendInPlace}): the payload must stay
     * unchanged until the listener hears. Opening a new connection, when one is needed, blocks and
     * allocates.
     *
     * @param endpoint the server
     * @param method   the method
     * @param payload  the request bytes; unchanged until the listener hears
     * @param listener receives the outcome on an I/O thread
     * @param tag      handed back to the listener
     * @return as {@link #send}
     * @throws RpcException as {@link #send}
     */
    public boolean sendInPlace(InetSocketAddress endpoint, Method<?, ?> method, MemorySegment payload,
                               ResponseListener listener, long tag) {
        return withConnection(endpoint, c -> c.sendInPlace(method, payload, 0, listener, tag));
    }

    /**
     * @param endpoint a server
     * @return open connections to it now
     */
    public int connections(InetSocketAddress endpoint) {
        Endpoint e = endpoints.get(endpoint);
        if (e == null) {
            return 0;
        }
        int n = 0;
        for (ClientCore c : e.connections.get()) {
            if (c.isOpen()) {
                n++;
            }
        }
        return n;
    }

    /** @return the pool's counters (all its connections, past and present) */
    public RpcMetrics metrics() {
        return metrics;
    }

    /** Closes every connection (pending calls fail with CONNECTION_CLOSED) and the owned transport. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reaper.shutdownNow();
        for (Endpoint e : endpoints.values()) {
            e.closeAll();
        }
        if (ownsTransport) {
            transport.close();
        }
    }

    /** Settings of a pool; {@link #build()} validates them. Not thread-safe. */
    public static final class Builder {
        private int maxConnections = 4;
        private int maxOutstanding = 1024;
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration reconnectBackoff = Duration.ofMillis(100);
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration defaultTimeout = Duration.ofSeconds(30);
        private int maxFrameLength = FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH;
        private int ioThreads = 1;
        private Transport transport;
        private RdmaConfig rdma;
        private Duration idleSpin = Duration.ZERO;

        private Builder() {
        }

        /**
         * Connects over RDMA with the default {@link RdmaConfig}; see {@link #rdma(RdmaConfig)}.
         *
         * @return this
         */
        public Builder rdma() {
            return rdma(new RdmaConfig());
        }

        /**
         * Connects over RDMA with {@code config} (copied): the pool creates and owns one RDMA
         * transport shared by all its connections. Cannot be combined with {@link #transport}.
         *
         * @param config the RDMA settings
         * @return this
         */
        public Builder rdma(RdmaConfig config) {
            this.rdma = Objects.requireNonNull(config, "config").copy();
            return this;
        }

        /**
         * @param n most connections per endpoint, at least 1; default 4
         * @return this
         */
        public Builder maxConnectionsPerEndpoint(int n) {
            this.maxConnections = n;
            return this;
        }

        /**
         * @param n most outstanding calls per connection; default 1024
         * @return this
         */
        public Builder maxOutstandingPerConnection(int n) {
            this.maxOutstanding = n;
            return this;
        }

        /**
         * @param timeout close connections idle this long; default 60 s
         * @return this
         */
        public Builder idleTimeout(Duration timeout) {
            this.idleTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * @param backoff wait after a failed connection attempt before trying again; default 100 ms
         * @return this
         */
        public Builder reconnectBackoff(Duration backoff) {
            this.reconnectBackoff = Objects.requireNonNull(backoff, "backoff");
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
         * @param spin how long each event loop polls without sleeping after its last event, when the
         *             pool creates its transport (see {@link TcpTransport.Config#idleStrategy}); default 0
         *             (sleep at once); 20-100 us where each side has cores of its own. Ignored with {@link #transport(Transport)}.
         * @return this
         */
        public Builder idleSpin(Duration spin) {
            this.idleSpin = Objects.requireNonNull(spin, "spin");
            return this;
        }

        /**
         * @param bytes the largest frame sent or accepted; default 16 MiB
         * @return this
         */
        public Builder maxFrameLength(int bytes) {
            this.maxFrameLength = bytes;
            return this;
        }

        /**
         * @param n event-loop threads of the pool's own transport; default 1
         * @return this
         */
        public Builder ioThreads(int n) {
            this.ioThreads = n;
            return this;
        }

        /**
         * @param transport a transport the caller owns; default: the pool creates a TCP transport
         * @return this
         */
        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * @return the pool, owned by the caller
         * @throws IllegalArgumentException for an invalid setting
         */
        public RpcClientPool build() {
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnectionsPerEndpoint must be positive: " + maxConnections);
            }
            if (maxOutstanding < 1 || maxOutstanding > ClientCore.MAX_OUTSTANDING) {
                throw new IllegalArgumentException("maxOutstandingPerConnection must be in [1, "
                        + ClientCore.MAX_OUTSTANDING + "]: " + maxOutstanding);
            }
            Settings.checkPositive("idleTimeout", idleTimeout);
            if (reconnectBackoff.isNegative()) {
                throw new IllegalArgumentException("reconnectBackoff must not be negative: " + reconnectBackoff);
            }
            Settings.checkPositive("connectTimeout", connectTimeout);
            Settings.checkPositive("defaultTimeout", defaultTimeout);
            Settings.checkMaxFrame(maxFrameLength);
            RdmaSupport.checkExclusive(rdma, transport);
            boolean owns = transport == null;
            Transport t = !owns ? transport
                    : rdma != null ? RdmaSupport.create(rdma, "rdmarpc-pool-rdma")
                    : TcpTransport.create(new TcpTransport.Config().ioThreads(ioThreads).idleStrategy(RpcServer.idleOf(idleSpin))
                            .threadNamePrefix("rdmarpc-pool"));
            return new RpcClientPool(this, t, owns);
        }
    }
}
