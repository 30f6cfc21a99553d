package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.client.ClientCore;
import dev.rdmarpc.rpc.internal.Settings;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

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
    private static final System.Logger LOG = System.getLogger(RpcClientPool.class.getName());

    private final Transport transport;
    private final boolean ownsTransport;
    private final Counters metrics = new Counters();
    private final ClientBuilder.Connector connector;
    private final ClientInterceptor[] interceptors;
    private final int maxConnections;
    private final long idleTimeoutNanos;
    private final long backoffNanos;
    /** The service {@link Builder#healthCheck} names; null: no health checks. */
    private final String healthService;
    private final Duration healthInterval;
    private final ConcurrentHashMap<InetSocketAddress, EndpointChannel> endpoints = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper;
    private volatile boolean closed;
    private volatile Observations observations = Observations.NONE;

    private RpcClientPool(Builder b, Transport transport, boolean owns) {
        this.transport = transport;
        this.ownsTransport = owns;
        this.connector = b.connector(transport, metrics);
        this.interceptors = connector.interceptors().toArray(new ClientInterceptor[0]);
        this.maxConnections = b.maxConnections;
        this.idleTimeoutNanos = b.idleTimeout.toNanos();
        this.backoffNanos = b.reconnectBackoff.toNanos();
        this.healthService = b.healthService;
        this.healthInterval = b.healthInterval;
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rdmarpc-pool-reaper");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(10), idleTimeoutNanos / 4);
        reaper.scheduleWithFixedDelay(this::closeIdle, period, period, TimeUnit.NANOSECONDS);
        if (healthService != null) {
            long every = healthInterval.toNanos();
            reaper.scheduleWithFixedDelay(() -> endpoints.values().forEach(e -> e.health.checkSoon()), every, every,
                    TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The channel of one endpoint and its connections: a copy-on-write array changed by
     * compare-and-set (so an I/O thread removing a closed connection never waits); the lock guards
     * opening connections, one at a time, each on a thread of its own so that no caller waits for it
     * longer than its call's deadline.
     */
    final class EndpointChannel extends AbstractChannel {
        final InetSocketAddress address;
        final ReentrantLock lock = new ReentrantLock();
        final AtomicReference<ClientCore[]> connections = new AtomicReference<>(new ClientCore[0]);
        /** The connection being opened, completed when it is open or failed; null when none. Under lock. */
        CompletableFuture<Void> opening;
        long lastFailureNanos;
        String lastFailure;
        boolean failedOnce;
        /** What the endpoint last reported for the pool's health-checked service; null without health checks. */
        final PoolHealth health;

        EndpointChannel(InetSocketAddress address) {
            this.address = address;
            this.health = healthService == null ? null : new PoolHealth(this, address, healthService, healthInterval);
        }

        /**
         * The least loaded open connection. Another is opened (in the background) when that one has a
         * call outstanding and the endpoint has fewer than {@code maxConnectionsPerEndpoint}; the call
         * waits for it only when every open connection is full.
         */
        @Override
        ClientCore pickNow() {
            if (closed) {
                throw poolClosed();
            }
            if (health != null) {
                health.checkServing();
            }
            ClientCore best = leastLoaded();
            if (best == null) {
                return null;
            }
            if (best.outstandingHint() > 0 && connections.get().length < maxConnections) {
                CompletableFuture<Void> f = open(true);
                if (f != null && best.outstandingHint() >= connector.maxOutstanding()) {
                    return null; // full: wait for the new one
                }
            }
            return claimed(best);
        }

        @Override
        ClientCore pick(long deadline) {
            while (true) {
                ClientCore c = pickNow();
                if (c != null) {
                    return c;
                }
                CompletableFuture<Void> f = open(false);
                long left = deadline - System.nanoTime();
                if (f == null) { // opened meanwhile, or the closed ones not yet dropped: look again
                    if (left <= 0) {
                        throw new RpcException(Status.DEADLINE_EXCEEDED, "the call's deadline passed while waiting for"
                                + " a connection to " + address);
                    }
                    Thread.yield();
                    continue;
                }
                try {
                    if (left <= 0) {
                        throw new TimeoutException();
                    }
                    f.get(left, TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new RpcException(Status.DEADLINE_EXCEEDED, "the call's deadline passed while its connection to "
                            + address + " was being opened");
                } catch (ExecutionException e) {
                    if (leastLoaded() == null) {
                        throw e.getCause() instanceof RpcException re ? re
                                : new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + ": " + e.getCause(),
                                e.getCause());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RpcException(Status.CANCELLED, "interrupted while connecting to " + address);
                }
            }
        }

        @Override
        CompletableFuture<Void> whenConnected() {
            return open(false);
        }

        @Override
        ScheduledExecutorService timer() {
            return reaper;
        }

        @Override
        long defaultTimeoutNanos() {
            return connector.defaultTimeoutNanos();
        }

        @Override
        long defaultStreamTimeoutNanos() {
            return connector.defaultStreamTimeoutNanos();
        }

        @Override
        ClientInterceptor[] interceptors() {
            return interceptors;
        }

        /**
         * Starts opening a connection unless one is being opened or the endpoint has its most.
         *
         * @param quiet true: return null rather than fail inside the backoff after a failed attempt
         * @return the connection being opened, or null when none is (the endpoint is at its limit,
         *         or, quiet, inside the backoff)
         * @throws RpcException UNAVAILABLE inside the backoff (not quiet), CONNECTION_CLOSED when the pool is closed
         */
        CompletableFuture<Void> open(boolean quiet) {
            lock.lock();
            try {
                if (closed) {
                    throw poolClosed();
                }
                if (opening != null) {
                    return opening;
                }
                ClientCore[] open = connections.get();
                if (open.length >= maxConnections) {
                    return null;
                }
                if (failedOnce && System.nanoTime() - lastFailureNanos < backoffNanos) {
                    if (quiet || open.length > 0) {
                        return null;
                    }
                    throw new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + " (retrying after "
                            + TimeUnit.NANOSECONDS.toMillis(backoffNanos) + " ms): " + lastFailure);
                }
                CompletableFuture<Void> f = new CompletableFuture<>();
                opening = f;
                Thread.ofPlatform().daemon().name("rdmarpc-pool-connect").start(() -> connect(f));
                return f;
            } finally {
                lock.unlock();
            }
        }

        /** Opens a connection (on its own thread), adds it, and completes {@code f}. */
        private void connect(CompletableFuture<Void> f) {
            ClientCore core = null;
            RpcException failure = null;
            try {
                core = connector.connect(address);
            } catch (RpcException e) {
                failure = e;
            } catch (RuntimeException e) {
                failure = new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + ": " + e, e);
            }
            lock.lock();
            try {
                opening = null;
                if (failure != null) {
                    failedOnce = true;
                    // the window starts when the attempt failed: one that took longer than the backoff
                    // (a connect timing out, an RDMA address resolution) must still hold the next off
                    lastFailureNanos = System.nanoTime();
                    lastFailure = failure.getMessage();
                } else if (closed) {
                    failure = poolClosed();
                } else {
                    failedOnce = false;
                    ClientCore added = core;
                    added.onClosed(() -> remove(added));
                    ClientCore[] old;
                    ClientCore[] next;
                    do {
                        old = connections.get();
                        next = Arrays.copyOf(old, old.length + 1);
                        next[old.length] = added;
                    } while (!connections.compareAndSet(old, next));
                    if (!added.isOpen()) { // closed before the listener was installed
                        remove(added);
                    }
                }
            } finally {
                lock.unlock();
            }
            if (failure != null) {
                if (core != null) {
                    core.close();
                }
                f.completeExceptionally(failure);
            } else {
                f.complete(null);
            }
        }

        /** The pool closed: a call waiting for the connection being opened fails now. */
        void stopOpening() {
            CompletableFuture<Void> f;
            lock.lock();
            try {
                f = opening;
            } finally {
                lock.unlock();
            }
            if (f != null) {
                f.completeExceptionally(poolClosed());
            }
        }

        /**
         * Claims {@code c} for the call about to start: the reaper leaves it open until the call holds
         * its slot ({@link #started}).
         */
        private static ClientCore claimed(ClientCore c) {
            c.claim();
            return c;
        }

        @Override
        void started(ClientCore c) {
            c.unclaim();
        }

        /**
         * A connection that closed under the call is dropped, and the call tried once more on another
         * (a caller that may not wait takes only one that is open now).
         */
        @Override
        ClientCore retry(ClientCore failed, RpcException error, int attempt, long deadline, boolean mayWait) {
            if (error.status() != Status.CONNECTION_CLOSED || attempt > 1 || closed) {
                throw error;
            }
            remove(failed);
            ClientCore next = mayWait ? pick(deadline) : pickNow();
            if (next == null) {
                throw error;
            }
            failed.unclaim(); // only now: when pick throws, the caller still holds failed and gives it back
            return next;
        }

        /**
         * @return the open connection with the fewest request bytes outstanding, then the fewest calls,
         *         among those with a free call slot (among all when none has one); null when none is open
         */
        private ClientCore leastLoaded() {
            ClientCore best = null;
            boolean bestFull = true;
            long bestBytes = Long.MAX_VALUE;
            int bestCalls = Integer.MAX_VALUE;
            int capacity = connector.maxOutstanding();
            for (ClientCore c : connections.get()) {
                int calls = c.outstandingHint();
                long bytes = c.outstandingBytesHint();
                boolean full = calls >= capacity;
                boolean better = best == null || (bestFull && !full)
                        || (full == bestFull && (bytes < bestBytes || (bytes == bestBytes && calls < bestCalls)));
                if (better && c.isOpen()) {
                    best = c;
                    bestFull = full;
                    bestBytes = bytes;
                    bestCalls = calls;
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
                if (c.outstandingHint() == 0 && now - c.lastActivityNanos() > idleTimeoutNanos
                        && c.closeIfIdleSince(now - idleTimeoutNanos)) {
                    remove(c);
                    LOG.log(System.Logger.Level.DEBUG, "closing idle connection to {0}", address);
                }
            }
        }

        void closeAll() {
            for (ClientCore c : connections.get()) {
                c.close();
            }
        }

        @Override
        public String toString() {
            return "RpcChannel[" + address + ", " + connections.get().length + " connection(s) of " + transport.name() + "]";
        }
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
        Objects.requireNonNull(endpoint, "endpoint");
        if (closed) {
            throw poolClosed();
        }
        EndpointChannel e = endpoints.get(endpoint);
        if (e != null) {
            return e;
        }
        e = endpoints.computeIfAbsent(endpoint, EndpointChannel::new);
        if (e.health != null) {
            e.health.checkSoon(); // the first check now, not an interval later
        }
        return e;
    }

    private static RpcException poolClosed() {
        return new RpcException(Status.CONNECTION_CLOSED, "client pool is closed");
    }

    private void closeIdle() {
        long now = System.nanoTime();
        for (EndpointChannel e : endpoints.values()) {
            try {
                e.closeIdle(now);
            } catch (RuntimeException ex) {
                LOG.log(System.Logger.Level.WARNING, "closing idle connections failed", ex);
            }
        }
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
        EndpointChannel e = endpoints.get(endpoint);
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
        reaper.shutdownNow();
        for (EndpointChannel e : endpoints.values()) {
            e.stopOpening();
            e.closeAll();
        }
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
            validate();
            RpcClientPool pool = makeOnTransport(Role.POOL, (t, owns) -> new RpcClientPool(this, t, owns));
            return pool.observedBy(observers());
        }
    }
}
