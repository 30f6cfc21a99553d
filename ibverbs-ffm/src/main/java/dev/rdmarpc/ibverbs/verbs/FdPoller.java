package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Waits on several file descriptors at once ({@code poll(2)}): the way one thread serves a
 * connection manager's event channel and completion channels together, as C programs do with
 * {@code poll} over {@code cm_channel->fd} and {@code comp_channel->fd}, instead of alternating
 * timed waits or running a thread per channel.
 *
 * <pre>{@code
 * try (FdPoller poller = new FdPoller(cmChannel.fd(), completionChannel.fd())) {
 *     while (running) {
 *         poller.await(null);                                   // until one is readable
 *         if (poller.isReadable(0)) {
 *             CmEvent event = cmChannel.poll(Duration.ZERO);    // null when another thread took it
 *             ...
 *         }
 *         if (poller.isReadable(1)) {
 *             CompletionQueue cq = completionChannel.awaitEvent(0);
 *             ...                                               // re-arm, poll the CQ, acknowledge
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>The descriptors are the caller's: the poller never reads or closes them, it only reports which
 * are readable (or failed: {@link #isFailed}). Every channel of this project hands out a
 * non-blocking descriptor, so a take after a wake-up that someone else already served returns
 * nothing rather than blocking.
 *
 * <p>Threads: one thread at a time calls {@link #await}, {@link #isReadable} and {@link #isFailed};
 * {@link #wakeup()} may be called from any thread, and makes the current or the next {@code await}
 * return at once (as {@link java.nio.channels.Selector#wakeup()} does). {@link #close()} frees the
 * native memory and the wake-up eventfd, once; not while a thread waits.
 *
 * <p>{@code await} allocates nothing.
 */
public final class FdPoller implements AutoCloseable {
    private final int[] fds;
    private final Arena arena = Arena.ofShared();
    /** {@code fds.length + 1} {@code struct pollfd}: the caller's descriptors, then the wake-up eventfd. */
    private final MemorySegment pollfds;
    private final MemorySegment wakeScratch;
    private final MemorySegment drainScratch;
    private final int wakeFd;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * A poller over {@code fds}, each waited on for readability; their indexes here are the indexes
     * of {@link #isReadable(int)}.
     *
     * @throws IllegalArgumentException when there is no descriptor or one is negative
     */
    public FdPoller(int... fds) {
        if (fds.length == 0) {
            throw new IllegalArgumentException("no file descriptors to wait on");
        }
        for (int fd : fds) {
            if (fd < 0) {
                throw new IllegalArgumentException("file descriptor must not be negative, was " + fd);
            }
        }
        this.fds = fds.clone();
        this.pollfds = arena.allocate(Posix.POLLFD_BYTES * (fds.length + 1), 8);
        this.wakeScratch = arena.allocate(8, 8);
        this.drainScratch = arena.allocate(8, 8);
        int eventfd;
        try {
            eventfd = Posix.eventfd();
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        this.wakeFd = eventfd;
    }

    /** How many descriptors this poller waits on (not counting its own wake-up descriptor). */
    public int size() {
        return fds.length;
    }

    /** The descriptor at {@code index}. */
    public int fd(int index) {
        return fds[index];
    }

    /**
     * Waits until at least one descriptor is readable or failed, {@link #wakeup()} is called, or
     * {@code timeout} passes; then {@link #isReadable} and {@link #isFailed} say which.
     *
     * @param timeout at most this long; {@code null} waits without limit, zero only checks
     * @return how many of the caller's descriptors are readable or failed; 0 on timeout or wake-up
     * @throws IllegalStateException when the poller is closed
     * @throws dev.rdmarpc.ibverbs.VerbsException naming {@code poll} and its errno
     */
    public int await(Duration timeout) {
        int millis;
        if (timeout == null) {
            millis = -1;
        } else if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
        } else {
            millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
            if (millis == 0 && !timeout.isZero()) {
                millis = 1; // under a millisecond: wait the smallest amount poll(2) can
            }
        }
        return awaitMillis(millis);
    }

    /**
     * As {@link #await(Duration)}, with {@code timeoutMillis} -1 for no limit and 0 to only check.
     */
    public int awaitMillis(int timeoutMillis) {
        if (timeoutMillis < -1) {
            throw new IllegalArgumentException("timeoutMillis must be -1, 0 or positive, was " + timeoutMillis);
        }
        if (closed.get()) {
            throw new IllegalStateException("FdPoller is closed");
        }
        int n = fds.length;
        for (int i = 0; i < n; i++) {
            Posix.pollfd(pollfds, i, fds[i], Posix.POLLIN);
        }
        Posix.pollfd(pollfds, n, wakeFd, Posix.POLLIN);
        if (Posix.poll(pollfds, n + 1, timeoutMillis) == 0) {
            return 0;
        }
        if (Posix.revents(pollfds, n) != 0) {
            Posix.drain(wakeFd, drainScratch);
        }
        int ready = 0;
        for (int i = 0; i < n; i++) {
            if (Posix.revents(pollfds, i) != 0) {
                ready++;
            }
        }
        return ready;
    }

    /** Whether descriptor {@code index} was readable ({@code POLLIN}) at the last {@link #await}. */
    public boolean isReadable(int index) {
        return (revents(index) & Posix.POLLIN) != 0;
    }

    /**
     * Whether descriptor {@code index} reported an error, a hang-up or that it is not open
     * ({@code POLLERR}, {@code POLLHUP}, {@code POLLNVAL}) at the last {@link #await}.
     */
    public boolean isFailed(int index) {
        return (revents(index) & (Posix.POLLERR | Posix.POLLHUP | Posix.POLLNVAL)) != 0;
    }

    private int revents(int index) {
        if (index < 0 || index >= fds.length) {
            throw new IndexOutOfBoundsException("index " + index + " of " + fds.length + " descriptors");
        }
        return Posix.revents(pollfds, index);
    }

    /** Makes the waiting (or the next) {@link #await} return; any thread. Does nothing once closed. */
    public void wakeup() {
        synchronized (closed) {
            if (!closed.get()) {
                Posix.signal(wakeFd, wakeScratch);
            }
        }
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return closed.get();
    }

    /** Closes the wake-up eventfd and frees the native memory, once; the caller's descriptors stay open. */
    @Override
    public void close() {
        synchronized (closed) {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            Posix.close(wakeFd);
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "FdPoller" + java.util.Arrays.toString(fds) + (closed.get() ? "[closed]" : "");
    }
}
