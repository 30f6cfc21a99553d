package dev.rdmarpc.opentelemetry;

import io.opentelemetry.api.trace.Span;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What a server interceptor keeps between {@code beforeCall} and {@code afterCall} of one call (its start
 * time, its span), found again by the call's identity: a fixed table, so that tracking a call allocates
 * nothing. A call hashes to a window of {@link #WINDOW} slots; when every slot of its window is taken,
 * the call is not tracked (its duration is not recorded, it gets no span) and {@link #untracked()} counts it.
 * {@code afterCall} may run on another thread than {@code beforeCall}: the key is published last, with a
 * volatile write, after the start time and span.
 */
final class CallTable {
    static final int WINDOW = 16;
    private static final Object CLAIMING = new Object();

    private final AtomicReferenceArray<Object> keys;
    private final long[] starts;
    private final Span[] spans;
    private final int mask;
    private final java.util.concurrent.atomic.LongAdder untracked = new java.util.concurrent.atomic.LongAdder();

    /** @param capacity slots, rounded up to a power of two (at least {@link #WINDOW}) */
    CallTable(int capacity) {
        int n = Integer.highestOneBit(Math.max(WINDOW, capacity) - 1) << 1;
        keys = new AtomicReferenceArray<>(n);
        starts = new long[n];
        spans = new Span[n];
        mask = n - 1;
    }

    /**
     * @return the slot now holding {@code call}, or -1 when its window is full
     */
    int put(Object call, long startNanos, Span span) {
        int h = mix(System.identityHashCode(call));
        for (int i = 0; i < WINDOW; i++) {
            int slot = (h + i) & mask;
            if (keys.get(slot) == null && keys.compareAndSet(slot, null, CLAIMING)) {
                starts[slot] = startNanos;
                spans[slot] = span;
                keys.set(slot, call);
                return slot;
            }
        }
        untracked.increment();
        return -1;
    }

    /** @return the slot of {@code call}, or -1 when it is not tracked */
    int find(Object call) {
        int h = mix(System.identityHashCode(call));
        for (int i = 0; i < WINDOW; i++) {
            int slot = (h + i) & mask;
            if (keys.get(slot) == call) {
                return slot;
            }
        }
        return -1;
    }

    long start(int slot) {
        return starts[slot];
    }

    Span span(int slot) {
        return spans[slot];
    }

    /** Frees {@code slot}, found by {@link #find}. */
    void remove(int slot) {
        spans[slot] = null;
        keys.set(slot, null);
    }

    /** @return calls not tracked since the table was made, for want of a free slot */
    long untracked() {
        return untracked.sum();
    }

    /** @return slots taken now */
    int size() {
        int n = 0;
        for (int i = 0; i < keys.length(); i++) {
            if (keys.get(i) != null) {
                n++;
            }
        }
        return n;
    }

    private static int mix(int h) {
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
