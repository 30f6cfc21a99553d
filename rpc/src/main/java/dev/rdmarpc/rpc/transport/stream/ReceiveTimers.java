package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.loop.IdleFrameTimers;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The frame-read and idle timeouts of one {@link TcpConnection} ({@link IdleFrameTimers}, as an RDMA
 * connection's), and a client's pings: kept without a clock on the data path; the I/O thread's tick
 * stamps and compares times, so each fires within one tick interval of its due time. Loop thread only.
 */
final class ReceiveTimers {
    private final IdleFrameTimers timeouts;
    /** Nothing arrived between the last two ticks. */
    private boolean quiet;
    private final long pingNanos;
    private final long pingTimeoutNanos;
    /** The last tick that found bytes arrived, or found nothing awaited. */
    private long lastHeard;
    /** A ping went out at {@link #pingSentAt} and nothing has arrived since. */
    private boolean pingSent;
    private long pingSentAt;
    /** The last {@link #check} decided a ping is due. */
    private boolean pingDue;
    /** Queued bytes went out since the last tick. */
    private boolean sent;
    /** The last {@link #check}'s time. */
    private long lastCheck;

    /**
     * @param frameReadNanos most time a frame may take once started, 0 for no limit
     * @param idleNanos      most time the connection may stay idle, 0 for no limit
     * @param now            {@link System#nanoTime()} now
     */
    ReceiveTimers(long frameReadNanos, long idleNanos, long now) {
        this(frameReadNanos, idleNanos, 0, 0, now);
    }

    /**
     * @param pingNanos        a client's silence while waiting for responses after which it pings, 0 for never
     * @param pingTimeoutNanos then the most further silence before the connection is given up
     */
    ReceiveTimers(long frameReadNanos, long idleNanos, long pingNanos, long pingTimeoutNanos, long now) {
        this.timeouts = new IdleFrameTimers(frameReadNanos, idleNanos, now, "the server's idleTimeout",
                " (frameReadTimeout)");
        this.pingNanos = pingNanos;
        this.pingTimeoutNanos = pingTimeoutNanos;
        this.lastHeard = now;
        this.lastCheck = now;
    }

    /** Bytes arrived. */
    void received() {
        timeouts.received();
    }

    /** @return true when nothing arrived between the last {@link #check} and the one before */
    boolean quietSinceTick() {
        return quiet;
    }

    /**
     * Bytes this side queued earlier went out since the last tick: the peer's kernel takes them
     * (a vanished host's does not, once the socket buffer is full), so a client still sending a
     * large request is not waiting in silence.
     */
    void sent() {
        sent = true;
    }

    /** @return true when the last {@link #check} found a ping due: the caller sends one */
    boolean pingDue() {
        return pingDue;
    }

    /**
     * Whether a client's silence while its calls wait reaches a deadline within {@code horizonNanos}
     * of {@code now}: the ping falls due, or, a ping being out, the ping timeout. Until then ticks at
     * the loop's idle interval are soon enough (the last idle tick before the deadline brings the full
     * rate back, so the ping and the timeout keep their precision of one full-rate tick), and a silent
     * connection whose calls travel elsewhere (the TCP connection beside an RDMA one) does not keep
     * its thread waking at the full tick rate.
     *
     * @return false when this side never pings
     */
    boolean pingDeadlineWithin(long now, long horizonNanos) {
        if (pingNanos == 0) {
            return false;
        }
        long due = pingSent ? pingSentAt + pingTimeoutNanos : lastHeard + pingNanos;
        return due - now <= horizonNanos;
    }

    /** A whole frame arrived: the next one is timed from the tick that finds it half received. */
    void frameDone() {
        timeouts.frameDone();
    }

    /**
     * @param now          the tick's time
     * @param partialBytes bytes of a frame received so far and not yet whole (0: none)
     * @param paused       true while the connection itself does not read (its writes back up)
     * @param busy         true while a call is in flight or responses wait to be written
     * @return why the connection must be refused now, or null
     */
    IOException check(long now, long partialBytes, boolean paused, boolean busy) {
        return check(now, partialBytes, paused, busy, false);
    }

    /**
     * @param awaiting true on a client connection with calls waiting for their responses: silence
     *                 then counts towards a ping ({@link #pingDue}) and, after the ping, towards giving up;
     *                 a check more than half the ping timeout after the one before (this thread was held
     *                 up) starts the ping's wait again
     */
    IOException check(long now, long partialBytes, boolean paused, boolean busy, boolean awaiting) {
        boolean received = timeouts.receivedSinceTick();
        quiet = !received;
        pingDue = false;
        boolean sent = this.sent;
        this.sent = false;
        boolean late = now - lastCheck > pingTimeoutNanos / 2;
        lastCheck = now;
        if (pingNanos > 0) {
            if (received || sent || !awaiting) {
                lastHeard = now;
                pingSent = false;
            } else if (pingSent) {
                if (late) {
                    // this thread stood still (a GC pause, a starved or emulated CPU): the time it lost
                    // is not the peer's, whose answer may be waiting unread; the ping's wait starts again
                    pingSentAt = now;
                } else if (now - pingSentAt >= pingTimeoutNanos) {
                    return new IOException("no answer from the peer for " + TimeUnit.NANOSECONDS.toMillis(now - lastHeard)
                            + " ms while calls waited, not even to a ping (pingInterval and pingTimeout)");
                }
            } else if (now - lastHeard >= pingNanos) {
                pingSent = true;
                pingSentAt = now;
                pingDue = true;
            }
        }
        return timeouts.check(now, partialBytes, paused, busy);
    }
}
