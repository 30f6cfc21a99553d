package dev.rdmarpc.grpc.internal;

import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One call's flow control on either end: the messages queued for the sender thread (whose
 * {@code send} waits on the rdmarpc stream's window) and the application's demand for received
 * messages, for which the reader thread waits before it takes the next message off the stream.
 * {@link #isReady} is true while fewer than the on-ready threshold of bytes wait to be sent; when the
 * sender brings them under it, the on-ready callback runs (on the sender's thread, no lock held).
 */
final class StreamQueue {
    /** Tells the sender to end its loop. */
    static final Object STOP = new Object();
    /** Tells the sender to half-close the stream. */
    static final Object HALF_CLOSE = new Object();
    /** gRPC's default on-ready threshold. */
    static final int DEFAULT_READY_THRESHOLD = 32 * 1024;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition hasItem = lock.newCondition();
    private final Condition hasDemand = lock.newCondition();
    private final ArrayDeque<Object> items = new ArrayDeque<>();
    private final Runnable onReady;
    private volatile int readyThreshold = DEFAULT_READY_THRESHOLD;
    private long queuedBytes;
    private long requested;
    private boolean stopped;
    private boolean opened;

    StreamQueue(Runnable onReady) {
        this.onReady = onReady;
    }

    void readyThreshold(int bytes) {
        this.readyThreshold = bytes;
    }

    void opened() {
        lock.lock();
        try {
            opened = true;
        } finally {
            lock.unlock();
        }
        onReady.run();
    }

    void put(Wire.Out out) {
        lock.lock();
        try {
            if (stopped) {
                return;
            }
            items.add(out);
            queuedBytes += out.length;
            hasItem.signal();
        } finally {
            lock.unlock();
        }
    }

    void halfClose() {
        lock.lock();
        try {
            items.add(HALF_CLOSE);
            hasItem.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Queues a final item (the server's close); after it the sender's loop ends. */
    void putLast(Object item) {
        lock.lock();
        try {
            items.add(item);
            hasItem.signal();
        } finally {
            lock.unlock();
        }
    }

    /** @return the next item, or {@link #STOP} once stopped */
    Object take() throws InterruptedException {
        lock.lock();
        try {
            while (items.isEmpty() && !stopped) {
                hasItem.await();
            }
            return stopped ? STOP : items.poll();
        } finally {
            lock.unlock();
        }
    }

    /** The sender sent a message of {@code length} bytes. */
    void sent(int length) {
        boolean wake;
        lock.lock();
        try {
            long before = queuedBytes;
            queuedBytes -= length;
            wake = before >= readyThreshold && queuedBytes < readyThreshold && !stopped;
        } finally {
            lock.unlock();
        }
        if (wake) {
            onReady.run();
        }
    }

    boolean isReady() {
        lock.lock();
        try {
            return opened && !stopped && queuedBytes < readyThreshold;
        } finally {
            lock.unlock();
        }
    }

    void request(int n) {
        lock.lock();
        try {
            requested += n;
            hasDemand.signal();
        } finally {
            lock.unlock();
        }
    }

    /** @return true when a message is wanted, false when stopped */
    boolean awaitDemand() throws InterruptedException {
        lock.lock();
        try {
            while (requested == 0 && !stopped) {
                hasDemand.await();
            }
            return !stopped;
        } finally {
            lock.unlock();
        }
    }

    void consumed() {
        lock.lock();
        try {
            requested--;
        } finally {
            lock.unlock();
        }
    }

    void stop() {
        lock.lock();
        try {
            stopped = true;
            items.clear();
            hasItem.signalAll();
            hasDemand.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
