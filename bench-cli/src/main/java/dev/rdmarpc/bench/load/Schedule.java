package dev.rdmarpc.bench.load;

/**
 * The fixed send schedule of an open-loop cell: call {@code k} (from 0) is due at
 * {@code start + k * 1e9 / rate} nanoseconds, rounded down, whatever happened to earlier calls.
 * Exact integer arithmetic: no drift over long runs, no overflow for rates up to {@link #MAX_RATE}.
 */
final class Schedule {
    /** Largest rate a schedule accepts, calls per second. */
    static final long MAX_RATE = 100_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final long start;
    private final long rate;

    /**
     * @param startNanos when call 0 is due
     * @param ratePerSecond calls per second, 1 to {@link #MAX_RATE}
     */
    Schedule(long startNanos, long ratePerSecond) {
        if (ratePerSecond < 1 || ratePerSecond > MAX_RATE) {
            throw new IllegalArgumentException("rate " + ratePerSecond + " is out of range 1-" + MAX_RATE);
        }
        this.start = startNanos;
        this.rate = ratePerSecond;
    }

    /** When call {@code k} is due (its intended send time). */
    long intendedNanos(long k) {
        return start + (k / rate) * NANOS_PER_SECOND + (k % rate) * NANOS_PER_SECOND / rate;
    }

    /** The first call due at or after {@code t}: calls {@code [first(a), first(b))} are those due in {@code [a, b)}. */
    long first(long t) {
        if (t <= start) {
            return 0;
        }
        long d = t - start;
        // ceil(d * rate / 1e9) without overflow, then corrected for the rounding of intendedNanos.
        long k = (d / NANOS_PER_SECOND) * rate + ((d % NANOS_PER_SECOND) * rate + NANOS_PER_SECOND - 1) / NANOS_PER_SECOND;
        while (k > 0 && intendedNanos(k - 1) >= t) {
            k--;
        }
        while (intendedNanos(k) < t) {
            k++;
        }
        return k;
    }
}
