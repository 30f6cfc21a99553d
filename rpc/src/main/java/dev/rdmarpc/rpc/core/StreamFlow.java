package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The flow control of one side of a stream: the messages received and not yet read, with the window
 * granted to the peer for them, and the window the peer granted this side for its own sends.
 *
 * <p>Windows count bytes of message frames, header included, so a stream of empty messages is
 * bounded too. A sender may send while its window is above 0 and takes the frame's length from it
 * (it may go below 0 by one frame); so the receiver holds at most what it granted plus one frame.
 * The receiver grants more as its reader takes messages: once half its window has been read, it
 * gives that much back ({@link #takeGrant}). A peer that sends past its window broke the protocol:
 * the stream fails with {@code PROTOCOL_ERROR} and its later messages are dropped, so a peer cannot
 * grow this side's memory.
 *
 * <p>One thread reads ({@link #take}), one sends ({@link #awaitSendWindow}), the I/O thread
 * delivers; all under one lock.
 */
public final class StreamFlow {
    /** What a reader waits for at most between checks for a grant it could not send (see {@link #take}). */
    public static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ReentrantLock lock = new ReentrantLock();
    /** What a blocked reader or sender waits on; made by the first to wait (an asynchronous stream never does). Guarded by lock. */
    private Condition changed;
    /** This side's receive window: how much it grants the peer beyond what its reader took. */
    private final int window;

    // guarded by lock; sized for a unary call's few messages (a gRPC call is a stream per call), growing as needed
    private final ArrayDeque<Object> inbox = new ArrayDeque<>(3);
    private int[] sizes = new int[4];
    private int sizeHead;
    private int sizeCount;
    /** Bytes of message frames received, and granted to the peer, since the stream began. */
    private long received;
    private long granted = dev.rdmarpc.rpc.protocol.FrameDescriptor.STREAM_INITIAL_WINDOW;
    /** Bytes read by the reader and not yet granted back. */
    private long toGrant;
    /** The peer half-closed (or ended the stream): nothing more arrives. */
    private boolean peerDone;
    /** What ends the stream for this side's reader and sender, once known (null: open; see {@link #end}). */
    private RpcException failure;
    private boolean ended;
    /** What the peer still accepts from this side. */
    private long sendWindow = dev.rdmarpc.rpc.protocol.FrameDescriptor.STREAM_INITIAL_WINDOW;
    /** Bytes of the messages admitted from the peer, and sent to it, frame headers left out. */
    private long messageBytesIn;
    private long messageBytesOut;

    /** @param window this side's receive window, at least the protocol's initial window */
    public StreamFlow(int window) {
        this.window = window;
        this.toGrant = Math.max(0, window - dev.rdmarpc.rpc.protocol.FrameDescriptor.STREAM_INITIAL_WINDOW);
    }

    /**
     * Takes what this side owes the peer now (at the start: its window beyond the protocol's initial
     * one); the caller sends it, or gives it back with {@link #ungrant} when it cannot.
     *
     * @return the bytes to grant, 0 for none
     */
    public long grantNow() {
        lock.lock();
        try {
            return takeGrant();
        } finally {
            lock.unlock();
        }
    }

    /** Takes what this side owes the peer (lock held): it is granted once the caller sends it. */
    private long takeGrant() {
        long give = toGrant;
        toGrant = 0;
        granted += give;
        return give;
    }

    /** A grant of {@link #grantNow} could not be sent: it is owed again. */
    public void ungrant(long give) {
        lock.lock();
        try {
            granted -= give;
            toGrant += give;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the reader and sender waiting (lock held). */
    private void signalChanged() {
        if (changed != null) {
            changed.signalAll();
        }
    }

    /** @return the condition to wait on (lock held) */
    private Condition changed() {
        if (changed == null) {
            changed = lock.newCondition();
        }
        return changed;
    }

    // ------------------------------------------------------------------ the I/O thread

    /**
     * @param frameBytes the message frame's whole length
     * @return false when it came past the window: the stream failed (the caller drops the message)
     */
    public boolean admit(int frameBytes) {
        lock.lock();
        try {
            if (ended || failure != null) {
                return false;
            }
            if (received >= granted) {
                failure = new RpcException(Status.PROTOCOL_ERROR, "the peer sent " + (received + frameBytes)
                        + " bytes on a stream that was granted " + granted);
                discardInbox();
                signalChanged();
                return false;
            }
            received += frameBytes;
            messageBytesIn += frameBytes - dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Drops the messages not read (lock held); a message that holds a received frame releases it. */
    private void discardInbox() {
        Object m;
        while ((m = inbox.poll()) != null) {
            StreamMessages.drop(m);
        }
        sizeCount = 0;
    }

    /** Queues a message admitted by {@link #admit} for the reader; one that comes after the end is dropped. */
    public void deliver(Object message, int frameBytes) {
        lock.lock();
        try {
            if (ended || failure != null) {
                StreamMessages.drop(message);
                return;
            }
            inbox.add(message);
            if (sizeCount == sizes.length) {
                int[] bigger = new int[sizes.length * 2];
                for (int i = 0; i < sizeCount; i++) {
                    bigger[i] = sizes[(sizeHead + i) % sizes.length];
                }
                sizes = bigger;
                sizeHead = 0;
            }
            sizes[(sizeHead + sizeCount++) % sizes.length] = frameBytes;
            signalChanged();
        } finally {
            lock.unlock();
        }
    }

    /** The peer half-closed: the reader gets the end once it has read what came before. */
    public void peerDone() {
        lock.lock();
        try {
            peerDone = true;
            signalChanged();
        } finally {
            lock.unlock();
        }
    }

    /** The peer granted {@code increment} more bytes for this side's sends. */
    public void granted(long increment) {
        lock.lock();
        try {
            sendWindow += increment;
            signalChanged();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The stream ended: with {@code failure} null it ended well (the reader still reads what came
     * before, then the end), else with that failure, at once for both sides of this end.
     *
     * @param discard true to drop the messages not yet read (a cancel, a local failure)
     * @return false when it had ended already
     */
    public boolean end(RpcException failure, boolean discard) {
        lock.lock();
        try {
            if (ended) {
                return false;
            }
            ended = true;
            peerDone = true;
            if (this.failure == null) {
                this.failure = failure;
            }
            if (discard) {
                discardInbox();
            }
            signalChanged();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drops the messages not read, also after the stream ended (its reader gave up on them: a cancel after
     * the peer's end); one that holds a received frame releases it.
     */
    public void discard() {
        lock.lock();
        try {
            discardInbox();
            signalChanged();
        } finally {
            lock.unlock();
        }
    }

    /** @return true once the stream ended ({@link #end}) */
    public boolean isEnded() {
        return test(f -> f.ended);
    }

    /** @return the failure the stream ended with (or failed with locally), null when none */
    public RpcException failure() {
        return get(f -> f.failure);
    }

    // ------------------------------------------------------------------ the reader

    /** A message was taken: what the reader must do next. */
    public static final Object END = new Object();

    /**
     * Takes the next message, waiting for one until {@code deadlineNanos}.
     *
     * @param grant called (outside the lock) with bytes to grant back to the peer; returns false when
     *              it could not send them now (they are offered again on the next take or recheck)
     * @return the message, or {@link #END} when the peer finished sending and everything was read
     * @throws RpcException the stream's failure; DEADLINE_EXCEEDED at the deadline; CANCELLED when interrupted
     */
    public Object take(long deadlineNanos, java.util.function.LongPredicate grant, String what) {
        while (true) {
            long give = 0;
            Object message = null;
            boolean done = false;
            lock.lock();
            try {
                while (true) {
                    if (!inbox.isEmpty()) {
                        message = inbox.poll();
                        toGrant += sizes[sizeHead];
                        sizeHead = (sizeHead + 1) % sizes.length;
                        sizeCount--;
                        break;
                    }
                    if (failure != null) {
                        throw copy(failure);
                    }
                    if (peerDone) {
                        done = true;
                        break;
                    }
                    if (toGrant >= window / 2) {
                        break; // a grant owed: send it before waiting, the peer may be waiting for it
                    }
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        throw new RpcException(Status.DEADLINE_EXCEEDED, "no message " + what + " before the deadline");
                    }
                    try {
                        changed().awaitNanos(left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw failure != null ? copy(failure) // the stop that interrupted says why
                                : new RpcException(Status.CANCELLED, "interrupted while waiting for a message " + what);
                    }
                }
                // Granting back once half the window was read keeps the peer going with few window
                // frames; while the inbox is empty the peer still has at least half a window to send
                // (granted - received = window - toGrant), so it never waits on a reader that waits.
                if (!done && toGrant >= window / 2) {
                    give = takeGrant();
                }
            } finally {
                lock.unlock();
            }
            if (give > 0 && !grant.test(give)) {
                ungrant(give);
                if (message == null) {
                    lock.lock();
                    try {
                        changed().awaitNanos(RECHECK_NANOS); // the send queue was full: try again shortly
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw failure != null ? copy(failure) // the stop that interrupted says why
                                : new RpcException(Status.CANCELLED, "interrupted while waiting for a message " + what);
                    } finally {
                        lock.unlock();
                    }
                }
            }
            if (message != null) {
                return message;
            }
            if (done) {
                return END;
            }
        }
    }

    /**
     * Takes the next message without waiting (the asynchronous reader's {@link #take}); the bytes it
     * frees are granted back by {@link #grantDue}.
     *
     * @return the message; {@link #END} once the peer finished sending (or the stream ended) and
     *         everything was read; null when nothing is there now
     */
    public Object poll() {
        lock.lock();
        try {
            if (!inbox.isEmpty()) {
                toGrant += sizes[sizeHead];
                sizeHead = (sizeHead + 1) % sizes.length;
                sizeCount--;
                return inbox.poll();
            }
            return peerDone || ended || failure != null ? END : null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * What the asynchronous reader owes the peer now: once half the window was read, that much (the
     * caller sends it, or gives it back with {@link #ungrant}); else 0.
     */
    public long grantDue() {
        lock.lock();
        try {
            return ended || toGrant < window / 2 ? 0 : takeGrant();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The asynchronous sender's check: how much the peer accepts now.
     *
     * @return the send window (above 0: one frame may go), or {@link Long#MIN_VALUE} once the stream
     *         ended or failed (nothing goes any more)
     */
    public long sendRoom() {
        return read(f -> f.ended || f.failure != null ? Long.MIN_VALUE : f.sendWindow);
    }

    /** The asynchronous sender wrote a frame of {@code frameBytes} after {@link #sendRoom} said it may. */
    public void sent(int frameBytes) {
        lock.lock();
        try {
            sendWindow -= frameBytes;
            messageBytesOut += frameBytes - dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ the sender

    /**
     * Waits until the peer's window is above 0, then takes {@code frameBytes} from it.
     *
     * @throws RpcException the stream's failure, or why it cannot send: ended, DEADLINE_EXCEEDED at the
     *                      deadline, CANCELLED when interrupted
     */
    public void awaitSendWindow(int frameBytes, long deadlineNanos, String what) {
        lock.lock();
        try {
            while (true) {
                if (failure != null) {
                    throw copy(failure);
                }
                if (ended) {
                    throw new RpcException(Status.CANCELLED, "the stream has ended (its peer finished it):"
                            + " no more messages go out, and " + what + " was not sent");
                }
                if (sendWindow > 0) {
                    sendWindow -= frameBytes;
                    messageBytesOut += frameBytes - dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH;
                    return;
                }
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new RpcException(Status.DEADLINE_EXCEEDED, "the peer granted no room for " + what + " before the deadline"
                            + " (it reads too slowly, or not at all)");
                }
                try {
                    changed().awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw failure != null ? copy(failure) // the stop that interrupted says why
                            : new RpcException(Status.CANCELLED, "interrupted while waiting for room to send " + what);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return how many bytes of sends the peer accepts now (may be below 0 by one frame) */
    public long sendWindow() {
        return read(f -> f.sendWindow);
    }

    /** @return true once the peer finished sending (or the stream ended) and every message was taken */
    public boolean peerFinished() {
        return test(f -> (f.peerDone || f.ended) && f.inbox.isEmpty());
    }

    /** @return bytes of the messages received from the peer so far (their encoded form, frame headers left out) */
    public long messageBytesIn() {
        return read(f -> f.messageBytesIn);
    }

    /** @return bytes of the messages sent to the peer so far (their encoded form, frame headers left out) */
    public long messageBytesOut() {
        return read(f -> f.messageBytesOut);
    }

    /** @return messages received and not yet read */
    public int buffered() {
        return (int) read(f -> f.inbox.size());
    }

    // Reads under the lock; each reader is a non-capturing lambda (one instance, nothing allocated per read).

    private long read(java.util.function.ToLongFunction<StreamFlow> field) {
        lock.lock();
        try {
            return field.applyAsLong(this);
        } finally {
            lock.unlock();
        }
    }

    private boolean test(java.util.function.Predicate<StreamFlow> field) {
        lock.lock();
        try {
            return field.test(this);
        } finally {
            lock.unlock();
        }
    }

    private <T> T get(java.util.function.Function<StreamFlow, T> field) {
        lock.lock();
        try {
            return field.apply(this);
        } finally {
            lock.unlock();
        }
    }

    /** A fresh exception with the stream's status and message, thrown on the caller's thread (its stack). */
    private static RpcException copy(RpcException e) {
        return new RpcException(e.status(), e.getMessage(), e).withMetadata(e.metadata());
    }
}
