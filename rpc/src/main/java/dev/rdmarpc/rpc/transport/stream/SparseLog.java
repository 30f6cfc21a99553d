package dev.rdmarpc.rpc.transport.stream;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts occurrences of something a peer can cause at will (refused connections, failed
 * handshakes) and says when to log one: at most once per {@link #INTERVAL_NANOS}, with how many it
 * stands for, so that a port scanner cannot flood the log. Any thread.
 */
final class SparseLog {
    /** Least time between two messages: 10 s. */
    static final long INTERVAL_NANOS = 10_000_000_000L;

    private final AtomicLong unlogged = new AtomicLong();
    private final AtomicLong nextLog = new AtomicLong(System.nanoTime());

    /**
     * Counts one occurrence.
     *
     * @return 0 to say nothing; else log now, as standing for this many occurrences (this one and
     *         those since the last message)
     */
    long occurred() {
        unlogged.incrementAndGet();
        long now = System.nanoTime();
        long next = nextLog.get();
        if (now - next < 0 || !nextLog.compareAndSet(next, now + INTERVAL_NANOS)) {
            return 0;
        }
        return unlogged.getAndSet(0);
    }
}
