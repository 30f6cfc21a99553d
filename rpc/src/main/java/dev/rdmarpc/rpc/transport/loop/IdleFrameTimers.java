package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The idle and frame-read timeouts of one connection, TCP or RDMA, kept without a clock on the data path:
 * a receive only sets {@link #received}, a whole frame only clears {@link #frameDone}; the I/O thread's
 * tick stamps and compares times ({@link #check}), so both fire within one tick interval of their due
 * time. I/O thread only.
 */
public final class IdleFrameTimers {
    private final long frameReadNanos;
    private final long idleNanos;
    private final String idleSetting;
    private final String frameSetting;
    /** Something arrived since the last tick. */
    private boolean received;
    /** True while a half-received frame is being timed, since {@link #partialSince}. */
    private boolean timing;
    private long partialSince;
    private long lastActive;
    /** Ticks that found something received: a count that moves while the peer talks. */
    private int ticksHeard;

    /**
     * @param frameReadNanos most time a frame may take once started, 0 for no limit
     * @param idleNanos      most time the connection may stay idle, 0 for no limit
     * @param now            {@link System#nanoTime()} now: idleness counts from it
     * @param idleSetting    what the idle refusal names as its cause (the setting, say)
     * @param frameSetting   what the frame refusal adds after "N bytes of it arrived"
     */
    public IdleFrameTimers(long frameReadNanos, long idleNanos, long now, String idleSetting, String frameSetting) {
        this.frameReadNanos = frameReadNanos;
        this.idleNanos = idleNanos;
        this.lastActive = now;
        this.idleSetting = idleSetting;
        this.frameSetting = frameSetting;
    }

    /** Something arrived (bytes, a message, credits). */
    public void received() {
        received = true;
    }

    /** @return true when something arrived since the last {@link #check} */
    public boolean receivedSinceTick() {
        return received;
    }

    /**
     * @return how many ticks found something received: a hint that other threads may read (the TCP
     *         connection beside an RDMA one, to know whether the peer was heard over RDMA)
     */
    public int ticksHeard() {
        return ticksHeard;
    }

    /** A whole frame arrived: the next one is timed from the tick that finds it half received. */
    public void frameDone() {
        timing = false;
    }

    /** @return true while a half-received frame is timed */
    public boolean timingFrame() {
        return timing;
    }

    /**
     * @param now          the tick's time
     * @param partialBytes bytes of a frame received so far and not yet whole (0: none)
     * @param paused       true while the connection itself does not handle what arrives
     * @param busy         true while a call is in flight or something waits to be written or read
     * @return why the connection must be refused now, or null
     */
    public IOException check(long now, long partialBytes, boolean paused, boolean busy) {
        if (received || busy || paused || partialBytes > 0) {
            if (received) {
                ticksHeard++;
            }
            received = false;
            lastActive = now;
        } else if (idleNanos > 0 && now - lastActive >= idleNanos) {
            return new IdleTimeoutException("closed after " + TimeUnit.NANOSECONDS.toMillis(now - lastActive)
                    + " ms idle (no call in flight, nothing received; " + idleSetting + ")");
        }
        if (frameReadNanos == 0 || partialBytes == 0 || paused) {
            timing = false;
        } else if (!timing) {
            timing = true;
            partialSince = now;
        } else if (now - partialSince >= frameReadNanos) {
            return new ProtocolException("frame incomplete after " + TimeUnit.NANOSECONDS.toMillis(now - partialSince)
                    + " ms: " + partialBytes + " bytes of it arrived" + frameSetting);
        }
        return null;
    }
}
