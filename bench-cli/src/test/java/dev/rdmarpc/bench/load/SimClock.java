package dev.rdmarpc.bench.load;

import java.util.PriorityQueue;

/**
 * A simulated clock for the load drivers: time moves only when the driver waits, and a wait delivers the
 * next scheduled event (a fake response) if it falls before the wait's deadline, on the driver's own
 * thread. Runs are thus exact and repeatable, whatever the machine is doing.
 */
final class SimClock implements LoadClock {
    private record Event(long at, long seq, Runnable action) {
    }

    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long now;
    private long seq;

    SimClock(long origin) {
        this.now = origin;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void parkUntil(long deadlineNanos) {
        Event next = events.peek();
        if (next != null && next.at <= deadlineNanos) {
            events.poll();
            now = Math.max(now, next.at);
            next.action.run();
        } else {
            now = Math.max(now, deadlineNanos);
        }
    }

    /** Runs {@code action} when the clock reaches {@code at}. */
    void schedule(long at, Runnable action) {
        events.add(new Event(at, seq++, action));
    }
}
