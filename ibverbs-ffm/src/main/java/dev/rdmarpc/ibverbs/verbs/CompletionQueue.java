package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_cq;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A completion queue ({@code struct ibv_cq}): where the work requests of queue pairs complete.
 * {@link #poll(WorkCompletions, int)} copies completions into a reusable {@link WorkCompletions}
 * array and allocates nothing.
 *
 * {@snippet :
 * try (WorkCompletions wc = new WorkCompletions(32)) {
 *     int n = cq.poll(wc, 32);
 *     for (int i = 0; i < n; i++) {
 *         if (wc.status(i) != WcStatus.SUCCESS) {
 *             throw new IllegalStateException(wc.status(i).text());
 *         }
 *         handle(wc.wrId(i), wc.byteLength(i));
 *     }
 * }
 * }
 *
 * <p>With a {@link CompletionChannel}, {@link #requestNotify(boolean)} arms it and
 * {@link #awaitCompletions} runs the whole arm/poll/wait dance (see {@link CompletionChannel}).
 *
 * <p>Depends on its {@link Context} and channel; refuses to close while a queue pair uses it.
 * Polling and arming are for one thread at a time (libibverbs' CQs are thread-safe, but one
 * {@link WorkCompletions} is not); closing is thread-safe but must not race a poll.
 */
public final class CompletionQueue extends VerbsResource {
    /** Events are acknowledged in batches of this many ({@code ibv_ack_cq_events} takes a mutex). */
    static final int ACK_BATCH = 64;

    private final Context context;
    private final CompletionChannel channel;
    private final MemorySegment cq;
    private final long address;
    private final int capacity;
    private final AtomicInteger unacked = new AtomicInteger();
    private final MemorySegment pollFn;
    private final MemorySegment notifyFn;

    CompletionQueue(Context context, CompletionChannel channel, MemorySegment cq) {
        super(ResourceKind.COMPLETION_QUEUE, context, channel);
        this.context = context;
        this.channel = channel;
        this.cq = cq.reinterpret(ibv_cq.sizeof());
        this.address = cq.address();
        this.capacity = ibv_cq.cqe(this.cq);
        MemorySegment ctx = ibv_cq.context(this.cq);
        this.pollFn = DataPath.op(ctx, DataPath.OPS_POLL_CQ, "poll_cq");
        this.notifyFn = DataPath.op(ctx, DataPath.OPS_REQ_NOTIFY_CQ, "req_notify_cq");
        if (channel != null) {
            channel.attach(this);
        }
        context.registerElement(this.cq, this);
    }

    /** The device. */
    public Context context() {
        return context;
    }

    /** The channel its notifications go to, or {@code null}. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The native {@code struct ibv_cq *}. */
    public MemorySegment segment() {
        return cq;
    }

    long address() {
        return address;
    }

    /** How many completions it holds (at least what was asked for). */
    public int capacity() {
        return capacity;
    }

    /**
     * Takes up to {@code max} completions into {@code wc} (entries 0 to the result - 1); allocates nothing.
     *
     * @return how many were taken, 0 when the queue is empty
     * @throws IndexOutOfBoundsException when {@code max} exceeds {@code wc}'s capacity
     * @throws IllegalStateException when this queue is closed
     * @throws VerbsException when the provider fails (a CQ overrun)
     */
    public int poll(WorkCompletions wc, int max) {
        ensureOpen();
        int n = DataPath.pollCq(pollFn, address, max, wc.pollAddress(max));
        if (n < 0) {
            throw new VerbsException("ibv_poll_cq", -n);
        }
        return n;
    }

    /** {@link #poll(WorkCompletions, int)} with {@code max} = {@code wc}'s capacity. */
    public int poll(WorkCompletions wc) {
        return poll(wc, wc.capacity());
    }

    /**
     * Arms the queue ({@code ibv_req_notify_cq}): the next completion (with {@code solicitedOnly},
     * the next one of a solicited or failed work request) raises one event on the channel.
     */
    public void requestNotify(boolean solicitedOnly) {
        ensureOpen();
        if (channel == null) {
            throw new IllegalStateException(this + " has no completion channel to notify");
        }
        int rc = DataPath.reqNotifyCq(notifyFn, address, solicitedOnly ? 1 : 0);
        if (rc != 0) {
            throw new VerbsException("ibv_req_notify_cq", Math.abs(rc));
        }
    }

    /**
     * Polls; when the queue is empty, arms it, polls again, and waits on the channel for the event,
     * up to {@code timeoutMillis} in all: the race-free dance of {@link CompletionChannel}. Assumes
     * this is the only CQ of its channel that anyone waits for (events for others are counted, not
     * handed on). Allocates nothing.
     *
     * @param timeoutMillis -1 without limit
     * @return how many completions were taken; 0 only when the time ran out
     */
    public int awaitCompletions(WorkCompletions wc, int max, long timeoutMillis) {
        if (channel == null) {
            throw new IllegalStateException(this + " has no completion channel to wait on");
        }
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        while (true) {
            int n = poll(wc, max);
            if (n > 0) {
                return n;
            }
            requestNotify(false);
            n = poll(wc, max);
            if (n > 0) {
                return n; // armed with completions already taken: at worst a spurious event later
            }
            long wait = timeoutMillis <= 0 ? timeoutMillis : Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            CompletionQueue fired = channel.awaitEvent(wait);
            if (fired == null || timeoutMillis == 0) {
                return poll(wc, max); // out of time: whatever is there now
            }
            // an event: the CQ is disarmed; poll (and re-arm) again
        }
    }

    /** Events taken from the channel and not yet acknowledged. */
    public int unacknowledgedEvents() {
        return unacked.get();
    }

    /** Acknowledges the events taken so far ({@code ibv_ack_cq_events}); done in batches anyway. */
    public void acknowledgeEvents() {
        int n = unacked.getAndSet(0);
        if (n > 0) {
            ibverbs_h.ibv_ack_cq_events(cq, n);
        }
    }

    void eventReceived() {
        if (unacked.incrementAndGet() >= ACK_BATCH) {
            acknowledgeEvents();
        }
    }

    @Override
    void destroy() {
        acknowledgeEvents();
        VerbsNative.check("ibv_destroy_cq", ibverbs_h.ibv_destroy_cq(cq));
        if (channel != null) {
            channel.detach(this);
        }
        context.unregisterElement(cq);
    }

    @Override
    public String toString() {
        return "CompletionQueue[" + context.name() + ", " + capacity + " entries]";
    }
}
