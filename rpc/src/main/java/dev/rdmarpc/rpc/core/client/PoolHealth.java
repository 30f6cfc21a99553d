package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Health;
import dev.rdmarpc.rpc.RpcChannel;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A pool endpoint's health, as its server last reported it ({@link dev.rdmarpc.rpc.RpcClientPool.Builder#healthCheck}):
 * checked every {@code interval} on a virtual thread of its own; while the server reports anything but
 * {@link Health.ServingStatus#SERVING} for the service, calls to the endpoint fail at once with
 * {@link Status#UNAVAILABLE} and are not sent. A check that fails (no answer within the interval, the
 * endpoint unreachable) changes nothing: calls find out for themselves. A server without the health method
 * ({@link Status#UNKNOWN_METHOD}) counts as serving.
 */
final class PoolHealth {
    private static final System.Logger LOG = System.getLogger(PoolHealth.class.getName());

    private final RpcChannel channel;
    private final Object endpoint;
    private final String service;
    private final Duration interval;
    private volatile Health.ServingStatus reported = Health.ServingStatus.SERVING;
    /** The thread running a check now, which may call while the endpoint does not serve; null when none. */
    private volatile Thread checking;
    private final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean();

    PoolHealth(RpcChannel channel, Object endpoint, String service, Duration interval) {
        this.channel = channel;
        this.endpoint = endpoint;
        this.service = service;
        this.interval = interval;
    }

    /** Starts a check unless one is under way (called by the pool's timer every interval). */
    void checkSoon() {
        if (running.compareAndSet(false, true)) {
            Thread.ofVirtual().name("rdmarpc-pool-health").start(this::check);
        }
    }

    private void check() {
        checking = Thread.currentThread();
        try {
            Health.ServingStatus now;
            try {
                now = Health.check(channel, service, interval);
            } catch (RpcException e) {
                if (e.status() != Status.UNKNOWN_METHOD) {
                    LOG.log(System.Logger.Level.DEBUG, "health check of {0} failed: {1}", endpoint, e.getMessage());
                    return;
                }
                now = Health.ServingStatus.SERVING;
            }
            if (now != reported) {
                LOG.log(System.Logger.Level.INFO, "{0} reports {1} for service \"{2}\"", endpoint, now, service);
                reported = now;
            }
        } finally {
            checking = null;
            running.set(false);
        }
    }

    /**
     * Before a call is given a connection.
     *
     * @throws RpcException {@link Status#UNAVAILABLE} while the endpoint does not serve (except for the check itself)
     */
    void checkServing() {
        Health.ServingStatus s = reported;
        if (s != Health.ServingStatus.SERVING && Thread.currentThread() != checking) {
            throw new RpcException(Status.UNAVAILABLE, endpoint + " reports " + s + " for service \"" + service
                    + "\" (health checked every " + TimeUnit.NANOSECONDS.toMillis(interval.toNanos()) + " ms)");
        }
    }

    /** @return what the endpoint last reported */
    Health.ServingStatus reported() {
        return reported;
    }
}
