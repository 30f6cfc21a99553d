package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcMetrics;
import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
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
 * The connections of an {@link dev.rdmarpc.rpc.RpcClientPool}, one {@link EndpointChannel} per
 * endpoint, as the pool's class comment describes: the least loaded connection per call, more opened
 * in the background up to the most per endpoint, reconnection after a backoff, idle ones closed by the
 * reaper, and the optional health checks.
 */
public final class ClientPool implements RpcProvider.Pool {
    private static final System.Logger LOG = System.getLogger("dev.rdmarpc.rpc.RpcClientPool");

    private final Transport transport;
    private final Counters metrics = new Counters();
    private final Connector connector;
    private final ClientInterceptor[] interceptors;
    private final int maxOutstanding;
    private final long defaultTimeoutNanos;
    private final long defaultStreamTimeoutNanos;
    private final int maxConnections;
    private final long idleTimeoutNanos;
    private final long backoffNanos;
    /** The service health checks ask about; null: no health checks. */
    private final String healthService;
    private final Duration healthInterval;
    private final ConcurrentHashMap<InetSocketAddress, EndpointChannel> endpoints = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper;
    private volatile boolean closed;

    /**
     * @param transport through which the pool's connections are opened
     * @param settings  the settings of each connection, validated
     * @param pool      the pool's own settings, validated
     */
    public ClientPool(Transport transport, RpcProvider.ClientSettings settings, RpcProvider.PoolSettings pool) {
        this.transport = transport;
        this.connector = new Connector(transport, metrics, settings);
        this.interceptors = settings.interceptors().toArray(new ClientInterceptor[0]);
        this.maxOutstanding = settings.maxOutstanding();
        this.defaultTimeoutNanos = settings.defaultTimeoutNanos();
        this.defaultStreamTimeoutNanos = settings.defaultStreamTimeoutNanos();
        this.maxConnections = pool.maxConnectionsPerEndpoint();
        this.idleTimeoutNanos = pool.idleTimeout().toNanos();
        this.backoffNanos = pool.reconnectBackoff().toNanos();
        this.healthService = pool.healthService();
        this.healthInterval = pool.healthCheckInterval();
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
                if (f != null && best.outstandingHint() >= maxOutstanding) {
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
            return defaultTimeoutNanos;
        }

        @Override
        long defaultStreamTimeoutNanos() {
            return defaultStreamTimeoutNanos;
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
            int capacity = maxOutstanding;
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

    @Override
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

    @Override
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

    @Override
    public RpcMetrics metrics() {
        return metrics;
    }

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
    }
}
