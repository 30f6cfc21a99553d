package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The idle and frame timeouts of one {@link RdmaConnection} ({@link RdmaConfig.Timeouts#idle},
 * {@link RdmaConfig.Timeouts#frameRead}), kept without a clock on the data path: a receive only sets
 * {@link #received}; the I/O thread's tick stamps and compares times, so both fire within one tick
 * interval of their due time. They mean what the TCP transport's {@code idleTimeout} and
 * {@code frameReadTimeout} mean. I/O thread only.
 */
final class RdmaTimers {
    private final long frameReadNanos;
    private final long idleNanos;
    /** A message arrived since the last tick. */
    private boolean received;
    /** True while a half-received frame is being timed, since {@link #partialSince}. */
    private boolean timing;
    private long partialSince;
    private long lastActive;

    /**
     * @param frameReadNanos most time a frame may take once its first message arrived, 0 for no limit
     * @param idleNanos      most time the connection may stay idle, 0 for no limit (client connections)
     * @param now            {@link System#nanoTime()} when the connection was set up: idleness counts from it
     */
    RdmaTimers(long frameReadNanos, long idleNanos, long now) {
        this.frameReadNanos = frameReadNanos;
        this.idleNanos = idleNanos;
        this.lastActive = now;
    }

    /** A message arrived (data or credits). */
    void received() {
        received = true;
    }

    /** A whole frame arrived: the next one is timed from the tick that finds it half received. */
    void frameDone() {
        timing = false;
    }

    /**
     * @param now          the tick's time
     * @param partialBytes bytes of a frame received so far and not yet whole (0: none)
     * @param paused       true while the connection itself does not handle what arrives (reading
     *                     disabled or paused, a frame waiting for its address's share)
     * @param busy         true while a call is in flight, frames wait to be sent or read by the peer, or
     *                     this side reads a frame of the peer's
     * @return why the connection must be refused now, or null
     */
    IOException check(long now, long partialBytes, boolean paused, boolean busy) {
        if (received || busy || paused || partialBytes > 0) {
            received = false;
            lastActive = now;
        } else if (idleNanos > 0 && now - lastActive >= idleNanos) {
            return new IdleTimeoutException("closed after " + TimeUnit.NANOSECONDS.toMillis(now - lastActive)
                    + " ms idle (no call in flight, nothing received; the server's RDMA timeouts.idle)");
        }
        if (frameReadNanos == 0 || partialBytes == 0 || paused) {
            timing = false;
        } else if (!timing) {
            timing = true;
            partialSince = now;
        } else if (now - partialSince >= frameReadNanos) {
            return new ProtocolException("frame incomplete after " + TimeUnit.NANOSECONDS.toMillis(now - partialSince)
                    + " ms: " + partialBytes + " bytes of it arrived over RDMA (timeouts.frameRead)");
        }
        return null;
    }

    /** @return true while a half-received frame is timed (the connection wants full-rate ticks) */
    boolean timingFrame() {
        return timing;
    }
}
