package dev.rdmarpc.bench.load;

import java.util.concurrent.locks.LockSupport;

/**
 * The time source and the wait of a load driver: {@link #SYSTEM} in real runs; tests substitute a simulated
 * clock that delivers a fake stack's responses in time order, so that schedules and stalls can be checked
 * exactly, without timing assumptions.
 */
interface LoadClock {

    /** Now, in nanoseconds on an arbitrary origin (as {@link System#nanoTime}). */
    long nanoTime();

    /**
     * Waits until {@code deadlineNanos} or less: an unpark of the waiting thread, or (simulated) the next
     * event before it, ends the wait early. Callers re-check their condition in a loop.
     */
    void parkUntil(long deadlineNanos);

    /** The real clock: {@link System#nanoTime} and {@link LockSupport#parkNanos}. */
    LoadClock SYSTEM = new LoadClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void parkUntil(long deadlineNanos) {
            long d = deadlineNanos - System.nanoTime();
            if (d > 0) {
                LockSupport.parkNanos(d);
            }
        }
    };
}
