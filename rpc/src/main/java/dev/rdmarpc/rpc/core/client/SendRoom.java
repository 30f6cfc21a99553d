package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.transport.Connection;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Blocking callers and stream writers of one client connection waiting for room in the send queue,
 * in the order they came, each by a condition of its own: only the first is woken when the transport
 * makes progress, only it claims, and a blocking call that finds anyone waiting joins the end instead
 * of taking the room first. Guarded by the {@link CallTable}'s lock, whose close it sees.
 */
final class SendRoom {
    /** Longest a caller waits for room before it checks the queue again (a guard, not the mechanism). */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final CallTable table;
    private final ReentrantLock lock;
    private final Counters metrics;
    private final long highWaterMark;
    private final ArrayDeque<Condition> queue = new ArrayDeque<>();
    /** The size of {@link #queue}, read without the lock. */
    private volatile int waiting;

    /**
     * @param highWaterMark bytes queued unsent at or above which a caller waits
     */
    SendRoom(CallTable table, Counters metrics, long highWaterMark) {
        this.table = table;
        this.lock = table.lock;
        this.metrics = metrics;
        this.highWaterMark = highWaterMark;
    }

    /**
     * Whether a caller that may wait must wait its turn before claiming: its claim was refused, the
     * queue is over the send high-water mark, or others wait and it has no place among them yet.
     */
    boolean mustWait(Connection c, boolean refused, Condition turn) {
        return refused || c.pendingBytes() >= highWaterMark || turn == null && waiting > 0;
    }

    /**
     * Waits in turn for room in the send queue: until the caller is the first of those waiting and
     * fewer than the high-water mark's bytes are queued unsent, or the deadline. The first caller keeps
     * its place until it has claimed ({@link #leave}), so the room goes to the callers in the order
     * they came. The transport signals progress ({@link #onProgress}); the wait also re-checks every
     * {@link #RECHECK_NANOS} so that no signal can be missed for long.
     *
     * @param atLeastOnce wait for one signal (or re-check) even if there seems to be room: the
     *                    transport refused a claim (another caller's claim came first, or every send
     *                    slot is queued)
     * @param turn        the caller's place from its earlier wait, or null to join at the end
     * @return the caller's place, now first (it claims, then leaves the queue), or null when the
     *         deadline passed first (it has left the queue)
     * @throws RpcException the close's status when the connection closed meanwhile, CANCELLED when
     *                      interrupted (it has left the queue)
     */
    Condition awaitSendRoom(Connection c, long deadline, boolean atLeastOnce, Condition turn) {
        lock.lock();
        try {
            if (turn == null) {
                turn = lock.newCondition();
                queue.addLast(turn);
                waiting = queue.size();
            }
            boolean mustWait = atLeastOnce;
            while (mustWait || queue.peekFirst() != turn || c.pendingBytes() >= highWaterMark) {
                mustWait = false;
                if (table.closedLocked()) {
                    remove(turn);
                    metrics.errors.increment();
                    throw table.closedError();
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    remove(turn);
                    return null;
                }
                try {
                    turn.awaitNanos(Math.min(remaining, RECHECK_NANOS));
                } catch (InterruptedException e) {
                    remove(turn);
                    Thread.currentThread().interrupt();
                    throw new RpcException(Status.CANCELLED, "interrupted while waiting for room in the send queue");
                }
            }
            return turn;
        } finally {
            lock.unlock();
        }
    }

    /** A caller done with its turn (it claimed, or gave up); null, or a turn already out, is a no-op. */
    void leave(Condition turn) {
        if (turn == null) {
            return;
        }
        lock.lock();
        try {
            remove(turn);
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code turn} out of the queue (lock held): when it was first, the next caller's turn comes. */
    private void remove(Condition turn) {
        if (queue.peekFirst() == turn) {
            queue.pollFirst();
            Condition next = queue.peekFirst();
            if (next != null) {
                next.signal();
            }
        } else {
            queue.remove(turn);
        }
        waiting = queue.size();
    }

    /** The transport sent something: the first caller waiting checks for room (the others wait for their turn). */
    void onProgress() {
        if (waiting > 0) {
            lock.lock();
            try {
                Condition first = queue.peekFirst();
                if (first != null) {
                    first.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** The table closed: every caller waiting wakes, sees the close and leaves. */
    void onClose() {
        lock.lock();
        try {
            for (Condition turn : queue) {
                turn.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return an OVERLOADED error saying how full the send queue is, and how long the caller waited */
    RpcException full(Connection c, long waitedNanos) {
        return new RpcException(Status.OVERLOADED, "send queue full: " + c.pendingBytes() + " bytes unsent, limit "
                + highWaterMark + (waitedNanos > 0 ? ", for the whole " + TimeUnit.NANOSECONDS.toMillis(waitedNanos)
                + " ms the call could wait" : ""));
    }
}
