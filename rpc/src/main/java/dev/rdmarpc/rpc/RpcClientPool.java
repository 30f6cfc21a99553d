package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.internal.Settings;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * A pool of client connections to any number of endpoints, sharing one transport (one set of I/O
 * threads, one buffer pool). {@link #channel} gives the {@link RpcChannel} of one endpoint, whose
 * calls go over the pool's connections to it.
 * {@snippet :
 * try (RpcClientPool pool = RpcClientPool.builder().maxConnectionsPerEndpoint(4).build()) {
 *     RpcChannel server = pool.channel(server.address());   // the same object on every call
 *     String r = server.call(ECHO, "hello");
 * }
 * }
 *
 * <p>Each call goes to the endpoint's open connection with the fewest request bytes outstanding
 * (then the fewest calls) among those with a free call slot, so a small call does not queue behind a
 * connection busy with a large request when another is free of one. When that connection has a call
 * outstanding and the endpoint has fewer than
 * {@link Builder#maxConnectionsPerEndpoint} connections, another is opened in the background (one at
 * a time), so that calls spread over the connections as soon as they overlap. Opening a connection
 * (TCP connect, TLS handshake, RDMA hello) runs on a thread of its own, bounded by the pool's
 * {@code connectTimeout}; a call that has to wait for it (no connection open, or every open one
 * full) waits no longer than its own deadline, which started when it was made: a blocking call,
 * a stream or {@code send} then fails with {@link Status#DEADLINE_EXCEEDED}, and {@code callAsync}
 * returns at once and its future fails so at the deadline. The connection goes on opening for the
 * calls that follow. A connection that failed is dropped, and the next call reconnects (after
 * {@link Builder#reconnectBackoff} from the moment the last attempt failed; a call inside that
 * window, with no connection open, fails with {@link Status#UNAVAILABLE}); a call that a connection
 * refuses because it just closed is tried once more on another. Connections idle for
 * {@link Builder#idleTimeout} (no outstanding call, none started or completed, none handed to a call
 * that is still starting) are closed.
 *
 * <p>Exhaustion: when every connection of the endpoint is open and full
 * ({@code maxConnectionsPerEndpoint x maxOutstanding} calls outstanding), the channel's
 * backpressure applies ({@link RpcChannel}): blocking calls wait for a free slot within their
 * timeout, then fail with {@link Status#OVERLOADED}; asynchronous ones fail at once with
 * {@link Status#OVERLOADED}; {@code send} returns false.
 *
 * <p>Thread-safe; the creator closes it, and its channels with it.
 */
public final class RpcClientPool implements AutoCloseable {
    private final Transport transport;
    private final boolean ownsTransport;
    private final RpcProvider.Pool pool;
    private volatile boolean closed;
    private volatile Observations observations = Observations.NONE;

    private RpcClientPool(Transport transport, boolean owns, RpcProvider.Pool pool) {
        this.transport = transport;
        this.ownsTransport = owns;
        this.pool = pool;
    }

    /**
     * The channel of {@code endpoint}: the same object for every call with the same address,
     * connected when its first call needs it.
     *
     * @param endpoint the server
     * @return its channel, closed with this pool
     * @throws RpcException {@link Status#CONNECTION_CLOSED} when the pool is closed
     */
    public RpcChannel channel(InetSocketAddress endpoint) {
        return pool.channel(endpoint);
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @param endpoint a server
     * @return open connections to it now
     */
    public int connections(InetSocketAddress endpoint) {
        return pool.connections(endpoint);
    }

    /** @return the pool's counters (all its connections, past and present) */
    public RpcMetrics metrics() {
        return pool.metrics();
    }

    /** @return the transport all the pool's connections share (owned by the pool when it created it) */
    public Transport transport() {
        return transport;
    }

    /** @return the buffer pool of the pool's transport (its counters, its high-water mark) */
    public dev.rdmarpc.rpc.buffer.BufferPool bufferPool() {
        return transport.bufferPool();
    }

    /** Registers this pool with {@code observers}; when one fails, closes the pool and rethrows. */
    private RpcClientPool observedBy(java.util.List<Observability> observers) {
        observations = Observations.register(observers, o -> o.observe(this), this::close);
        return this;
    }

    /** Closes every connection (pending calls fail with CONNECTION_CLOSED) and the owned transport. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pool.close();
        observations.close();
        if (ownsTransport) {
            transport.close();
        }
    }

    /**
     * Settings of a pool: those of each connection ({@link ClientBuilder}), the transport all share
     * ({@link RpcBuilder}), and how many connections per endpoint live how long; {@link #build()}
     * validates them. Not thread-safe.
     */
    public static final class Builder extends ClientBuilder<Builder> {
        private int maxConnections = 4;
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration reconnectBackoff = Duration.ofMillis(100);
        private String healthService;
        private Duration healthInterval = Duration.ofSeconds(1);

        private Builder() {
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
         * Stops sending to an endpoint whose server does not report {@code service} as
         * {@link Health.ServingStatus#SERVING}: the pool asks each endpoint's {@link Health#CHECK} every
         * {@link #healthCheckInterval} (and when its channel is first made); while the last answer is
         * NOT_SERVING or UNKNOWN (a server shutting down reads as NOT_SERVING), its calls fail at once with
         * {@link Status#UNAVAILABLE}, unsent, and they go out again once it answers SERVING. A check that gets
         * no answer changes nothing; a server without the health method counts as serving. The checks keep
         * one connection to each endpoint open. Default: no health checks.
         *
         * @param service the service to ask about ({@code ""}: the server as a whole), or null for no checks
         * @return this
         */
        public Builder healthCheck(String service) {
            this.healthService = service;
            return this;
        }

        /**
         * @param interval how often {@link #healthCheck} asks each endpoint, and how long one check may take;
         *                 default 1 s
         * @return this
         */
        public Builder healthCheckInterval(Duration interval) {
            this.healthInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * @return the pool, owned by the caller
         * @throws IllegalArgumentException for an invalid setting
         */
        public RpcClientPool build() {
            Settings.checkAtLeastOne("maxConnectionsPerEndpoint", maxConnections);
            Settings.checkPositive("idleTimeout", idleTimeout);
            Settings.checkNotNegative("reconnectBackoff", reconnectBackoff);
            Settings.checkPositive("healthCheckInterval", healthInterval);
            RpcProvider.ClientSettings settings = settings();
            RpcProvider.PoolSettings poolSettings = new RpcProvider.PoolSettings(maxConnections, idleTimeout,
                    reconnectBackoff, healthService, healthInterval);
            RpcClientPool pool = makeOnTransport(Role.POOL,
                    (t, owns) -> new RpcClientPool(t, owns, provider().pool(t, settings, poolSettings)));
            return pool.observedBy(observers());
        }
    }
}
