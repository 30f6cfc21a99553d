package dev.rdmarpc.rpc.transport.loop;

/**
 * How long an I/O thread in {@link dev.rdmarpc.rpc.transport.IdleStrategy.Mode#ADAPTIVE} polls
 * before it blocks, learnt from the idle stretches it has seen. Thread state of one loop: not
 * thread-safe.
 *
 * <p>An idle stretch runs from the end of the loop's last traffic to its next. Stretches come in two
 * kinds, learnt apart: those that began with calls in flight (a response is awaited, so the next
 * event is usually one round trip away) and those that began with none (the next request comes when
 * a caller sends it). For each kind the loop keeps:
 *
 * <ul>
 *   <li>a <em>reach</em>: the longest recent stretch that ended within the most spin. Each stretch
 *       that ends within it raises the reach to its own length if longer; every stretch takes 1/8
 *       off first, so the reach follows a change of pace within a few dozen stretches;
 *   <li>a <em>miss rate</em>: the share of recent stretches (weight 1/8 each) that lasted longer than
 *       the most spin, where spinning would only have burnt the core.
 * </ul>
 *
 * <p>A stretch of a kind whose miss rate is over one half is not spun at all (the thread blocks at
 * once, as {@code event} does); otherwise the thread spins for 1.5 x the reach, at least
 * {@link #MIN_SPIN_NANOS} and at most the most spin (which wins where it is smaller). Stretches still count while the thread blocks
 * (a blocked thread learns when the event came), so a kind that was given up on is spun again once
 * its stretches shorten. A new loop starts as if every stretch had ended just within the most spin.
 */
final class AdaptiveSpin {
    /** The least spin of a kind not given up on: 2 microseconds. */
    static final long MIN_SPIN_NANOS = 2_000;
    /** Fixed-point one of the miss rate. */
    private static final int ONE = 1 << 16;

    private final long maxSpinNanos;
    private final long[] reach = new long[2];
    private final int[] missRate = new int[2];

    /** @param maxSpinNanos the most one stretch is spun, positive */
    AdaptiveSpin(long maxSpinNanos) {
        if (maxSpinNanos <= 0) {
            throw new IllegalArgumentException("most spin not positive: " + maxSpinNanos + " ns");
        }
        this.maxSpinNanos = maxSpinNanos;
        reach[0] = maxSpinNanos;
        reach[1] = maxSpinNanos;
    }

    /**
     * @param callsInFlight the kind of stretch: whether it began with calls in flight
     * @return how long to poll, from the stretch's start, before blocking; 0 blocks at once
     */
    long spinNanos(boolean callsInFlight) {
        int k = callsInFlight ? 1 : 0;
        if (missRate[k] > ONE / 2) {
            return 0;
        }
        long r = reach[k];
        return Math.min(maxSpinNanos, Math.max(MIN_SPIN_NANOS, r + (r >> 1)));
    }

    /**
     * A stretch has ended: the loop saw traffic after {@code nanos} idle.
     *
     * @param nanos         how long the stretch lasted
     * @param callsInFlight its kind, as given to {@link #spinNanos} when it began
     */
    void stretchEnded(long nanos, boolean callsInFlight) {
        int k = callsInFlight ? 1 : 0;
        boolean missed = nanos > maxSpinNanos;
        missRate[k] += ((missed ? ONE : 0) - missRate[k]) >> 3;
        long r = reach[k] - (reach[k] >> 3);
        reach[k] = missed ? r : Math.max(r, nanos);
    }

    /** @return the share of recent stretches of the kind that outlasted the most spin, in [0, 1] */
    double missRate(boolean callsInFlight) {
        return missRate[callsInFlight ? 1 : 0] / (double) ONE;
    }
}
