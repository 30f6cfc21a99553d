package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_comp_channel;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * A completion channel ({@code struct ibv_comp_channel}): a file descriptor that becomes readable
 * when an armed {@link CompletionQueue} attached to it gets a completion. Wait on {@link #fd()}
 * with your own poller, or block in {@link #awaitEvent(long)}.
 *
 * <h2>The notification dance</h2>
 * A CQ notifies once per {@link CompletionQueue#requestNotify(boolean) arming}. The race-free loop,
 * which {@link CompletionQueue#awaitCompletions} does for you:
 * <ol>
 *   <li>poll the CQ; if it gave completions, handle them and poll again;</li>
 *   <li>empty: arm it ({@code ibv_req_notify_cq}), then <b>poll once more</b>: a completion that
 *       arrived between the last poll and the arming raises no event;</li>
 *   <li>still empty: wait for the event ({@link #awaitEvent}, i.e. poll(2) then
 *       {@code ibv_get_cq_event}), which disarms the CQ; go to 1.</li>
 * </ol>
 * Every event must be acknowledged ({@code ibv_ack_cq_events}) before the CQ is destroyed; the
 * acknowledgement takes a mutex, so this layer counts events per CQ and acknowledges them in
 * batches (and the rest when the CQ closes).
 *
 * <p>The fd is non-blocking. Depends on its {@link Context}; refuses to close while a CQ uses it.
 * {@link #awaitEvent} is for one thread at a time; {@link #fd()} and closing are thread-safe.
 */
public final class CompletionChannel extends VerbsResource {
    private final Context context;
    private final MemorySegment channel;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment pollfd;
    private final MemorySegment cqOut;
    private final MemorySegment cqContextOut;
    private volatile CompletionQueue[] queues = new CompletionQueue[0];

    CompletionChannel(Context context, MemorySegment channel) {
        super(ResourceKind.COMPLETION_CHANNEL, context);
        this.context = context;
        this.channel = channel.reinterpret(ibv_comp_channel.sizeof());
        this.fd = ibv_comp_channel.fd(this.channel);
        this.pollfd = arena.allocate(Posix.POLLFD_BYTES);
        this.cqOut = arena.allocate(ADDRESS);
        this.cqContextOut = arena.allocate(ADDRESS);
        Posix.setNonBlocking(fd);
    }

    /** The device. */
    public Context context() {
        return context;
    }

    /** The native {@code struct ibv_comp_channel *}. */
    public MemorySegment segment() {
        return channel;
    }

    /** The file descriptor (non-blocking) that is readable when an event is pending. */
    public int fd() {
        return fd;
    }

    /**
     * Waits up to {@code timeoutMillis} for a completion event and takes it ({@code ibv_get_cq_event}).
     * The CQ is disarmed by the event: re-arm it before waiting again. The event is counted for
     * acknowledgement on the CQ. Allocates nothing.
     *
     * @param timeoutMillis -1 to wait without limit, 0 to check
     * @return the CQ that had the event, or {@code null} when the time ran out
     */
    public CompletionQueue awaitEvent(long timeoutMillis) {
        ensureOpen();
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        while (true) {
            int wait = timeoutMillis < 0 ? -1 : timeoutMillis == 0 ? 0
                    : (int) Math.min(Integer.MAX_VALUE, Math.max(0, (deadline - System.nanoTime()) / 1_000_000L));
            Posix.pollfd(pollfd, 0, fd, Posix.POLLIN);
            if (Posix.poll(pollfd, 1, wait) == 0) {
                return null;
            }
            if (!VerbsNative.tryGetCqEvent(channel, cqOut, cqContextOut)) { // another reader took it
                if (timeoutMillis == 0 || (timeoutMillis > 0 && System.nanoTime() - deadline >= 0)) {
                    return null;
                }
                continue;
            }
            long address = cqOut.get(ADDRESS, 0).address();
            CompletionQueue[] qs = queues;
            for (CompletionQueue q : qs) {
                if (q.address() == address) {
                    q.eventReceived();
                    return q;
                }
            }
            throw new IllegalStateException("completion event for a CQ this channel does not know: 0x"
                    + Long.toHexString(address));
        }
    }

    synchronized void attach(CompletionQueue cq) {
        CompletionQueue[] old = queues;
        CompletionQueue[] copy = java.util.Arrays.copyOf(old, old.length + 1);
        copy[old.length] = cq;
        queues = copy;
    }

    synchronized void detach(CompletionQueue cq) {
        queues = java.util.Arrays.stream(queues).filter(q -> q != cq).toArray(CompletionQueue[]::new);
    }

    @Override
    void destroy() {
        VerbsNative.check("ibv_destroy_comp_channel", ibverbs_h.ibv_destroy_comp_channel(channel));
        arena.close();
    }

    @Override
    public String toString() {
        return "CompletionChannel[" + context.name() + ", fd " + fd + "]";
    }
}
