package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The frame-read and idle timeouts of one {@link TcpConnection}, kept without a clock on the data
 * path: a read only sets {@link #received}, a whole frame only clears {@link #frameDone}; the I/O
 * thread's tick stamps and compares times, so both fire within one tick interval of their due time.
 * Loop thread only.
 */
final class ReceiveTimers {
    private final long frameReadNanos;
    private final long idleNanos;
    /** Bytes arrived since the last tick. */
    private boolean received;
    /** True while a half-received frame is being timed, since {@link #partialSince}. */
    private boolean timing;
    private long partialSince;
    private long lastActive;
    /** Nothing arrived between the last two ticks. */
    private boolean quiet;

    /**
     * @param frameReadNanos most time a frame may take once started, 0 for no limit
     * @param idleNanos      most time the connection may stay idle, 0 for no limit
     * @param now            {@link System#nanoTime()} now
     */
    ReceiveTimers(long frameReadNanos, long idleNanos, long now) {
        this.frameReadNanos = frameReadNanos;
        this.idleNanos = idleNanos;
        this.lastActive = now;
    }

    /** Bytes arrived. */
    void received() {
        received = true;
    }

    /** @return true when nothing arrived between the last {@link #check} and the one before */
    boolean quietSinceTick() {
        return quiet;
    }

    /** A whole frame arrived: the next one is timed from the tick that finds it half received. */
    void frameDone() {
        timing = false;
    }

    /**
     * @param now          the tick's time
     * @param partialBytes bytes of a frame received so far and not yet whole (0: none)
     * @param paused       true while the connection itself does not read (its writes back up)
     * @param busy         true while a call is in flight or responses wait to be written
     * @return why the connection must be refused now, or null
     */
    IOException check(long now, long partialBytes, boolean paused, boolean busy) {
        quiet = !received;
        if (received || busy || paused || partialBytes > 0) {
            received = false;
            lastActive = now;
        } else if (idleNanos > 0 && now - lastActive >= idleNanos) {
            return new IdleTimeoutException("closed after " + TimeUnit.NANOSECONDS.toMillis(now - lastActive)
                    + " ms idle (no call in flight, nothing received; the server's idleTimeout)");
        }
        if (frameReadNanos == 0 || partialBytes == 0 || paused) {
            timing = false;
        } else if (!timing) {
            timing = true;
            partialSince = now;
        } else if (now - partialSince >= frameReadNanos) {
            return new ProtocolException("frame incomplete after " + TimeUnit.NANOSECONDS.toMillis(now - partialSince)
                    + " ms: " + partialBytes + " bytes of it arrived (frameReadTimeout)");
        }
        return null;
    }
}
