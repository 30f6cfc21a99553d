package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The outstanding calls of one client connection: a fixed table of slots indexed by the low bits of
 * the request id, each call's deadline, and whether the connection has closed.
 *
 * <p>Request id = (sequence &lt;&lt; 16) | slot. A slot is taken by {@code reserve} and freed once
 * ({@link #take}, {@link #release}, {@link #sweep} or {@link #closeAll}); an id whose slot was freed
 * meanwhile no longer matches, so a late response, cancel or release finds nothing. One lock guards the
 * table; it is also the lock of the connection's {@link SendRoom}. Reserving and taking allocate nothing.
 */
final class CallTable {
    static final int SLOT_BITS = 16;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    /** Most calls a connection can have outstanding (the slot field's range). */
    static final int MAX_OUTSTANDING = 1 << SLOT_BITS;

    private final Counters metrics;
    private final int capacity;
    final ReentrantLock lock = new ReentrantLock();
    private final Condition slotFreed = lock.newCondition();
    private int waiters;
    private final long[] ids;
    private final Object[] sinks;
    private final long[] tags;
    private final long[] deadlines;
    private final long[] starts;
    private final int[] requestBytes;
    private final Method<?, ?>[] methods;
    /** True for a call whose payload the transport may still read in place. */
    private final boolean[] inPlace;
    private final int[] free;
    private volatile int freeTop;
    /** Sum of {@link #requestBytes} of the held slots; written under {@link #lock}. */
    private volatile long outstandingBytes;
    /**
     * No held slot's deadline is earlier than this (a lower bound, under the lock): the timeout scan
     * runs only once it has passed, so a tick costs nothing while no call can have timed out.
     */
    private long earliestDeadline = Long.MAX_VALUE;
    private long seq;
    private boolean closed;
    private String closedReason = "connection closed";
    /**
     * What a call on the closed connection fails with: CONNECTION_CLOSED, or PERMISSION_DENIED when
     * the server refused this client (its TLS check of clients), UNAUTHENTICATED when it refused the
     * client's TLS certificate: every later call would be refused too.
     */
    private Status closedStatus = Status.CONNECTION_CLOSED;
    private volatile long lastActivityNanos = System.nanoTime();
    /** Calls a pool has handed this connection that have not yet taken a slot (or failed to start). */
    private final AtomicInteger claims = new AtomicInteger();
    private final Object[] expiredSinks;
    private final long[] expiredTags;
    private final long[] expiredElapsedNanos;
    private final Method<?, ?>[] expiredMethods;
    private final long[] expiredInPlace;

    /** What {@link #sweep} tells of each call whose deadline passed, after the lock is released. */
    interface Expired {
        /**
         * @param inPlaceId the call's id when the transport may still read its payload in place, else 0
         */
        void expired(Object sink, long tag, Method<?, ?> method, long elapsedNanos, long inPlaceId);
    }

    /** What {@link #take} found in a call's slot; one per thread that takes (the I/O thread keeps one). */
    static final class Taken {
        Object sink;
        long tag;
        long start;
        int requestBytes;
        Method<?, ?> method;
        boolean inPlace;
        boolean pastDeadline;
    }

    /** The calls {@link #closeAll} took out of the table, to be failed. */
    record Pending(Object[] sinks, long[] tags) {
    }

    /**
     * @param metrics  counters to update ({@code inFlight})
     * @param capacity most outstanding calls, in [1, {@link #MAX_OUTSTANDING}]
     */
    CallTable(Counters metrics, int capacity) {
        if (capacity < 1 || capacity > MAX_OUTSTANDING) {
            throw new IllegalArgumentException("maxOutstanding must be in [1, " + MAX_OUTSTANDING + "]: " + capacity);
        }
        this.metrics = metrics;
        this.capacity = capacity;
        this.ids = new long[capacity];
        this.sinks = new Object[capacity];
        this.tags = new long[capacity];
        this.deadlines = new long[capacity];
        this.starts = new long[capacity];
        this.requestBytes = new int[capacity];
        this.methods = new Method<?, ?>[capacity];
        this.inPlace = new boolean[capacity];
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeTop = capacity;
        this.expiredSinks = new Object[capacity];
        this.expiredTags = new long[capacity];
        this.expiredElapsedNanos = new long[capacity];
        this.expiredMethods = new Method<?, ?>[capacity];
        this.expiredInPlace = new long[capacity];
    }

    int capacity() {
        return capacity;
    }

    /** @return calls outstanding now */
    int outstanding() {
        lock.lock();
        try {
            return capacity - freeTop;
        } finally {
            lock.unlock();
        }
    }

    /** @return calls outstanding now, read without the lock (a hint) */
    int outstandingHint() {
        return capacity - freeTop;
    }

    /** @return the request bytes of the calls outstanding now, read without the lock (a hint) */
    long outstandingBytesHint() {
        return outstandingBytes;
    }

    /** @return {@link System#nanoTime()} of the last call started or completed */
    long lastActivityNanos() {
        return lastActivityNanos;
    }

    /** A call started or completed (or the connection opened) at {@code now}. */
    void touch(long now) {
        lastActivityNanos = now;
    }

    void claim() {
        claims.incrementAndGet();
    }

    void unclaim() {
        claims.decrementAndGet();
    }

    boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** @return whether the table is closed; the caller holds {@link #lock} */
    boolean closedLocked() {
        return closed;
    }

    /** @return what a call on the closed connection fails with; the caller holds {@link #lock} */
    RpcException closedError() {
        return new RpcException(closedStatus, closedReason);
    }

    /** @return what a call on the closed connection fails with */
    RpcException closedErrorNow() {
        lock.lock();
        try {
            return closedError();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a free slot without waiting; the call's deadline is {@code timeoutNanos} from now.
     *
     * @param payloadInPlace true when the transport may read the call's payload in place until it ends
     * @return the call's id, or -1 when no slot is free
     * @throws RpcException the close's status once the table is closed
     */
    long reserve(Object sink, long tag, Method<?, ?> method, int frame, long timeoutNanos, boolean payloadInPlace) {
        return reserve(sink, tag, method, frame, payloadInPlace, false, 0, false, timeoutNanos);
    }

    /**
     * Takes a free slot, waiting for one until {@code waitDeadline}; the call's deadline is
     * {@code deadline} (a call that waited for its slot keeps its deadline: the wait counts).
     *
     * @return the call's id, or -1 when no slot came free in time
     * @throws RpcException the close's status once the table is closed, CANCELLED when interrupted
     */
    long reserveWaiting(Object sink, Method<?, ?> method, int frame, long waitDeadline, long deadline) {
        return reserve(sink, 0, method, frame, false, true, waitDeadline, true, deadline);
    }

    /**
     * Takes a free slot without waiting; the call's deadline is {@code deadline}.
     *
     * @return the call's id, or -1 when no slot is free
     */
    long reserveUntil(Object sink, Method<?, ?> method, int frame, long deadline) {
        return reserve(sink, 0, method, frame, false, false, 0, true, deadline);
    }

    /** @param deadline with {@code ownDeadline}, the call's deadline; else its timeout from now */
    private long reserve(Object sink, long tag, Method<?, ?> method, int frame, boolean payloadInPlace, boolean wait,
                         long waitDeadline, boolean ownDeadline, long deadline) {
        long now = System.nanoTime();
        lock.lock();
        try {
            if (closed) {
                metrics.errors.increment();
                throw closedError();
            }
            while (freeTop == 0) {
                long remaining = waitDeadline - System.nanoTime();
                if (!wait || remaining <= 0) {
                    return -1;
                }
                awaitSlot(remaining);
                now = System.nanoTime();
            }
            return hold(sink, tag, method, frame, payloadInPlace, ownDeadline ? deadline : now + deadline, now);
        } finally {
            lock.unlock();
        }
    }

    /** Waits (lock held) until a slot is freed or {@code remaining} passed; throws once closed. */
    private void awaitSlot(long remaining) {
        waiters++;
        try {
            slotFreed.awaitNanos(remaining);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Status.CANCELLED, "interrupted while waiting for a free call slot");
        } finally {
            waiters--;
        }
        if (closed) {
            metrics.errors.increment();
            throw closedError();
        }
    }

    private long hold(Object sink, long tag, Method<?, ?> method, int frame, boolean payloadInPlace, long deadline,
                      long now) {
        int slot = free[--freeTop];
        long id = (++seq << SLOT_BITS) | slot;
        ids[slot] = id;
        sinks[slot] = sink;
        tags[slot] = tag;
        methods[slot] = method;
        inPlace[slot] = payloadInPlace;
        deadlines[slot] = deadline;
        if (freeTop == capacity - 1 || deadline - earliestDeadline < 0) {
            earliestDeadline = deadline; // the only held slot, or an earlier one
        }
        starts[slot] = now;
        requestBytes[slot] = frame;
        outstandingBytes += frame;
        lastActivityNanos = now;
        metrics.inFlight.increment();
        return id;
    }

    /** @return the slot of {@code id} while that call holds it, else -1; the caller holds {@link #lock} */
    private int slotOf(long id) {
        int slot = (int) (id & SLOT_MASK);
        return slot < capacity && ids[slot] == id ? slot : -1;
    }

    /** Frees the slot of {@code id}; false when it was no longer held by that call. */
    boolean release(long id) {
        lock.lock();
        try {
            int slot = slotOf(id);
            if (slot < 0) {
                return false;
            }
            freeSlot(slot);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees the slot of {@code id}, telling {@code into} what it held.
     *
     * @param now {@link System#nanoTime()}, to tell whether the call's deadline had passed
     * @return false when the slot was no longer held by that call ({@code into} is left as it was)
     */
    boolean take(long id, long now, Taken into) {
        lock.lock();
        try {
            int slot = slotOf(id);
            if (slot < 0) {
                return false;
            }
            into.pastDeadline = now - deadlines[slot] >= 0;
            into.sink = sinks[slot];
            into.tag = tags[slot];
            into.start = starts[slot];
            into.requestBytes = requestBytes[slot];
            into.method = methods[slot];
            into.inPlace = inPlace[slot];
            freeSlot(slot);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The response of call {@code id} is about to be written into its response target: when the call
     * still holds its slot and was not cancelled, it is marked so ({@link PendingCall#startLanding}),
     * under the lock, so that {@link #sweep} no longer ends it at its deadline.
     *
     * @return the call, or null when it ended (nothing may write its target)
     */
    PendingCall startLanding(long id) {
        lock.lock();
        try {
            int slot = slotOf(id);
            return slot >= 0 && sinks[slot] instanceof PendingCall p && p.startLanding() ? p : null;
        } finally {
            lock.unlock();
        }
    }

    /** @return what the call {@code id} waits with (its listener, future or stream), null once it ended */
    Object sink(long id) {
        lock.lock();
        try {
            int slot = slotOf(id);
            return slot < 0 ? null : sinks[slot];
        } finally {
            lock.unlock();
        }
    }

    private void freeSlot(int slot) {
        outstandingBytes -= requestBytes[slot];
        ids[slot] = 0;
        sinks[slot] = null;
        methods[slot] = null;
        inPlace[slot] = false;
        free[freeTop++] = slot;
        metrics.inFlight.decrement();
        if (waiters > 0) {
            slotFreed.signal();
        }
    }

    /** Calls are held (they have deadlines to watch); a racy read. */
    boolean hasHeld() {
        return freeTop != capacity;
    }

    /**
     * Frees the slots whose deadline is at or before {@code nowNanos}, then tells {@code to} of each
     * (outside the lock). Costs nothing before the earliest deadline. A call whose response attachment
     * is being written into its target ({@link #startLanding}) is left to end with its response (or the
     * connection's close), and looked at again on each sweep until then.
     *
     * @return how many calls expired
     */
    int sweep(long nowNanos, Expired to) {
        int n = 0;
        lock.lock();
        try {
            if (freeTop == capacity || earliestDeadline - nowNanos > 0) {
                return 0;
            }
            // Slots are handed out last-freed first, from slot 0 up, so held slots cluster low: the scan
            // ends after the last held one instead of walking the whole table (65,536 slots at most).
            int held = capacity - freeTop;
            long earliest = Long.MAX_VALUE;
            for (int slot = 0; slot < capacity && held > 0; slot++) {
                if (ids[slot] == 0) {
                    continue;
                }
                held--;
                if (deadlines[slot] - nowNanos <= 0 && !(sinks[slot] instanceof PendingCall p && p.landing())) {
                    expiredSinks[n] = sinks[slot];
                    expiredTags[n] = tags[slot];
                    expiredElapsedNanos[n] = nowNanos - starts[slot];
                    expiredMethods[n] = methods[slot];
                    expiredInPlace[n] = inPlace[slot] ? ids[slot] : 0;
                    n++;
                    freeSlot(slot);
                } else if (earliest == Long.MAX_VALUE || deadlines[slot] - earliest < 0) {
                    earliest = deadlines[slot];
                }
            }
            earliestDeadline = earliest;
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < n; i++) {
            Object sink = expiredSinks[i];
            expiredSinks[i] = null;
            Method<?, ?> m = expiredMethods[i];
            expiredMethods[i] = null;
            to.expired(sink, expiredTags[i], m, expiredElapsedNanos[i], expiredInPlace[i]);
        }
        return n;
    }

    /**
     * Closes the table: every later reserve throws ({@code status}, {@code reason}; the status is kept
     * only when it is PERMISSION_DENIED or UNAUTHENTICATED, else CONNECTION_CLOSED), every held slot is freed and every
     * caller waiting for a slot wakes.
     *
     * @return the calls that were outstanding, to be failed
     */
    Pending closeAll(Status status, String reason) {
        lock.lock();
        try {
            closed = true;
            closedReason = reason;
            if (status == Status.PERMISSION_DENIED || status == Status.UNAUTHENTICATED) {
                closedStatus = status;
            }
            int count = capacity - freeTop;
            Object[] pendingSinks = new Object[count];
            long[] pendingTags = new long[count];
            int n = 0;
            for (int slot = 0; slot < capacity && n < count; slot++) {
                if (ids[slot] != 0) {
                    pendingSinks[n] = sinks[slot];
                    pendingTags[n] = tags[slot];
                    n++;
                    freeSlot(slot);
                }
            }
            slotFreed.signalAll();
            return new Pending(pendingSinks, pendingTags);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the table when it is idle: no call held or claimed, and none started or completed since
     * {@code idleSince}. The check and the close are one step under the lock.
     *
     * @return true when it closed
     */
    boolean closeIfIdleSince(long idleSince) {
        lock.lock();
        try {
            if (closed || freeTop != capacity || claims.get() != 0 || lastActivityNanos - idleSince > 0) {
                return false;
            }
            closed = true;
            closedReason = "connection closed after being idle";
            return true;
        } finally {
            lock.unlock();
        }
    }
}
