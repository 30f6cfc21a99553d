package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.StreamListener;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the asynchronous ends of a stream share (client and server): the outbox of what could not go
 * out yet (the peer's window or the send queue was full), written in order as room comes, and the
 * delivery of what came in to the {@link StreamListener}, one callback at a time, for the messages
 * requested. Both sit on the stream's {@link StreamFlow}, as the blocking ends do.
 *
 * <p>Delivery runs on whichever thread made something due (the I/O thread for a message, a
 * requester, a sender whose message opened nothing): the first to arrive drains, and the others
 * leave their work to it ({@link #signal}), so callbacks never overlap and keep their order. With
 * an executor, the draining runs there instead.
 */
public abstract class AsyncStreamIo implements Runnable {
    private static final System.Logger LOG = System.getLogger(AsyncStreamIo.class.getName());
    private static final VarHandle WIP;
    private static final VarHandle DEMAND;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            WIP = lookup.findVarHandle(AsyncStreamIo.class, "wip", int.class);
            DEMAND = lookup.findVarHandle(AsyncStreamIo.class, "demand", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    /** A write went out. */
    public static final int WROTE = 0;
    /** A write found no room now: the subclass waits for the transport's progress and calls {@link #flush}. */
    public static final int NO_ROOM = 1;
    /** The stream (or connection) is over: nothing more goes out. */
    public static final int GONE = 2;

    /** The client's half-close, queued behind its messages. */
    public static final Object HALF_CLOSE = new Object();

    /** A message waiting for room. */
    private record Queued(Object value, int plen) {
    }

    public final StreamFlow flow;
    private final Executor executor;
    /** Signals not yet drained (the drainer is whoever took it from 0); through {@link #WIP}. */
    private volatile int wip;
    /** Messages requested and not yet delivered; through {@link #DEMAND}. */
    private volatile long demand;
    private final ReentrantLock outLock = new ReentrantLock();
    /**
     * Guarded by outLock: messages and markers not written yet, in order; made when something first
     * has to wait (a stream whose writes all go out at once never makes it), sized for a unary call's few.
     */
    private ArrayDeque<Object> outbox;
    private volatile int queued;
    private volatile StreamListener<Object> listener;
    /** Someone saw the stream not ready (or it has not been ready yet): tell onReady when it is. */
    private volatile boolean readyWanted = true;
    private volatile boolean readyDue;
    /** A grant could not be sent: the next room retries it. */
    private volatile boolean grantPending;
    // the draining thread's alone
    private boolean halfCloseTold;
    private boolean endTold;

    public AsyncStreamIo(StreamFlow flow, Executor executor) {
        this.flow = flow;
        this.executor = executor;
    }

    // ------------------------------------------------------------------ what the sides do

    /** Writes a message frame; @return {@link #WROTE}, {@link #NO_ROOM} or {@link #GONE} */
    protected abstract int writeMessage(Object value, int plen);

    /** Writes a marker queued with {@link #queueMarker} (the half-close, the open, the server's end). */
    protected abstract int writeMarker(Object marker);

    /** Sends a window update; @return false when it cannot go now */
    protected abstract boolean writeGrant(long increment);

    /** The transport's send queue was full: call {@link #onRoom} once it made progress. */
    protected abstract void awaitRoom();

    /** The metadata told with the end: the client's trailers, none on the server. */
    protected abstract Metadata endMetadata();

    /** A listener callback threw: end the stream (cancel on the client, fail on the server). */
    protected abstract void listenerFailed(RuntimeException e);

    // ------------------------------------------------------------------ setup

    public void listener(StreamListener<Object> l) {
        this.listener = l;
    }

    // ------------------------------------------------------------------ sending

    /** Writes {@code value} now if nothing is queued and there is room, else queues it. Never waits. */
    public void send(Object value, int plen) {
        outLock.lock();
        try {
            if (nothingQueued()) {
                int r = tryWrite(value, plen);
                if (r != NO_ROOM) {
                    return; // written, or the stream is over: the listener hears why
                }
            }
            ArrayDeque<Object> o = outbox();
            o.add(new Queued(value, plen));
            queued = o.size();
            readyWanted = true;
        } finally {
            outLock.unlock();
        }
    }

    /** Queues a marker behind what is queued and writes what can go. */
    public void queueMarker(Object marker) {
        outLock.lock();
        try {
            if (nothingQueued()) { // at the head: written now, as flush would
                int r = writeMarker(marker);
                if (r == NO_ROOM) {
                    awaitRoom();
                    ArrayDeque<Object> o = outbox();
                    o.add(marker);
                    queued = o.size();
                    return; // not ready: nothing to tell
                }
            } else {
                outbox.add(marker);
                queued = outbox.size();
            }
        } finally {
            outLock.unlock();
        }
        flush();
    }

    /** @return whether nothing waits in the outbox (outLock held) */
    private boolean nothingQueued() {
        return outbox == null || outbox.isEmpty();
    }

    /** @return the outbox, made now if it was not (outLock held) */
    private ArrayDeque<Object> outbox() {
        if (outbox == null) {
            outbox = new ArrayDeque<>(3);
        }
        return outbox;
    }

    private int tryWrite(Object value, int plen) {
        long room = flow.sendRoom();
        if (room == Long.MIN_VALUE) {
            return GONE;
        }
        if (room <= 0) {
            return NO_ROOM; // the peer's window: its update calls flush
        }
        int r = writeMessage(value, plen);
        if (r == WROTE) {
            flow.sent(dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH + plen);
        } else if (r == NO_ROOM) {
            awaitRoom();
        }
        return r;
    }

    /** Writes what is queued as far as room allows; tells onReady when the stream turned ready. */
    public void flush() {
        boolean ready;
        outLock.lock();
        try {
            while (!nothingQueued()) {
                Object item = outbox.peek();
                int r;
                if (item instanceof Queued q) {
                    r = tryWrite(q.value(), q.plen());
                } else {
                    r = writeMarker(item);
                    if (r == NO_ROOM) {
                        awaitRoom();
                    }
                }
                if (r == NO_ROOM) {
                    break;
                }
                outbox.poll();
                if (r == GONE) {
                    outbox.clear();
                }
            }
            queued = outbox == null ? 0 : outbox.size();
            ready = nothingQueued() && flow.sendRoom() > 0;
        } finally {
            outLock.unlock();
        }
        if (ready && readyWanted) {
            readyWanted = false;
            readyDue = true;
            signal();
        }
    }

    /** Drops what is queued (the stream ended). */
    public void dropOutbox() {
        outLock.lock();
        try {
            if (outbox != null) {
                outbox.clear();
            }
            queued = 0;
        } finally {
            outLock.unlock();
        }
    }

    /** The transport sent something: write what waits, and a grant that could not go. */
    public void onRoom() {
        flush();
        if (grantPending) {
            signal();
        }
    }

    /** @return true when a send would go out at once */
    public boolean isReady() {
        boolean ready = queued == 0 && flow.sendRoom() > 0;
        if (!ready) {
            readyWanted = true;
        }
        return ready;
    }

    // ------------------------------------------------------------------ receiving

    public void request(int n) {
        if (n <= 0) {
            throw new IllegalArgumentException("request(" + n + "): ask for at least one message");
        }
        DEMAND.getAndAdd(this, (long) n);
        signal();
    }

    /** Something is due for the listener (a message, the end, readiness): drain here or leave it to the drainer. */
    public void signal() {
        if ((int) WIP.getAndAdd(this, 1) != 0) {
            return;
        }
        if (executor != null) {
            try {
                executor.execute(this);
                return;
            } catch (RejectedExecutionException e) {
                // the executor is gone: deliver here rather than lose the stream's end
            }
        }
        run();
    }

    @Override
    public void run() {
        int missed = 1;
        do {
            drain();
            missed = (int) WIP.getAndAdd(this, -missed) - missed;
        } while (missed != 0);
    }

    private void drain() {
        StreamListener<Object> l = listener;
        if (l == null || endTold) {
            return;
        }
        try {
            if (readyDue) {
                readyDue = false;
                if (!flow.isEnded()) {
                    l.onReady();
                }
            }
            while (demand > 0 && !endTold) {
                Object m = flow.poll();
                if (m == null || m == StreamFlow.END) {
                    break;
                }
                DEMAND.getAndAdd(this, -1L);
                grant();
                l.onMessage(m);
            }
            grant();
            if (endTold) {
                return;
            }
            if (flow.isEnded()) {
                if (flow.buffered() == 0) {
                    endTold = true;
                    dropOutbox();
                    l.onEnd(flow.failure(), endMetadata());
                }
            } else if (!halfCloseTold && flow.peerFinished() && flow.failure() == null) {
                halfCloseTold = true;
                l.onHalfClose();
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "a stream listener threw; the stream ends", e);
            listenerFailed(e);
        }
    }

    private void grant() {
        long give = flow.grantDue();
        if (give > 0) {
            if (writeGrant(give)) {
                grantPending = false;
            } else {
                flow.ungrant(give);
                grantPending = true;
                awaitRoom();
            }
        }
    }

    /** @return the listener once set (for ends told before it was) */
    public StreamListener<Object> listener() {
        return listener;
    }
}
