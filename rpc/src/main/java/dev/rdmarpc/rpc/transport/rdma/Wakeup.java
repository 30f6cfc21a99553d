package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.PosixException;
import dev.rdmarpc.rpc.transport.loop.SocketPoller;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What an RDMA I/O thread sleeps on: {@code poll(2)} over an {@code eventfd(2)} (so other threads
 * can wake it), the file descriptors of its completion channels and the epoll descriptor of its
 * TCP sockets (the hello connections and plain TCP clients, in a {@link SocketPoller}), through
 * {@link dev.rdmarpc.posix.Posix}. The verbs layer waits on one channel at a time, so the transport
 * polls its channels itself.
 *
 * <p>Ownership: the loop creates one and closes it once, after its thread ended. {@link #wake()} is
 * thread-safe; {@link #await} is for the owning thread.
 */
final class Wakeup implements AutoCloseable {
    private static final int MAX_FDS = 17;
    /** The least time between two looks at the sockets from {@link #pollSocketsNow}: 50 us. */
    static final long SOCKET_POLL_INTERVAL_NANOS = 50_000;

    private final Arena arena = Arena.ofShared();
    private final SocketPoller sockets;
    /** The pollfds: the eventfd, the channels, then the sockets' epoll descriptor. */
    private final MemorySegment fds = arena.allocate(Posix.POLLFD_BYTES * MAX_FDS, 8);
    private final long socketPollIntervalNanos;
    /** When the sockets were last polled (System.nanoTime). */
    private long socketsPolledAt;
    private final MemorySegment writeScratch = arena.allocate(8, 8);
    private final MemorySegment readScratch = arena.allocate(8, 8);
    private final int eventFd;
    private volatile boolean closed;
    /** Threads inside {@link #wake()}: close waits for them, so no write can hit a reused fd number. */
    private final AtomicInteger waking = new AtomicInteger();

    /** @param sockets the TCP sockets the thread polls beside its channels */
    Wakeup(SocketPoller sockets) {
        this(sockets, SOCKET_POLL_INTERVAL_NANOS);
    }

    /** @param socketPollIntervalNanos the least time between two looks at the sockets from {@link #pollSocketsNow} */
    Wakeup(SocketPoller sockets, long socketPollIntervalNanos) {
        this.sockets = sockets;
        this.socketPollIntervalNanos = socketPollIntervalNanos;
        this.socketsPolledAt = System.nanoTime();
        try {
            this.eventFd = Posix.eventfd();
        } catch (PosixException e) {
            arena.close();
            throw new IllegalStateException("eventfd failed: the RDMA I/O thread cannot be woken (" + e.getMessage() + ")", e);
        }
    }

    /** Wakes the thread in {@link #await}, or makes its next call return at once. Allocates nothing. */
    void wake() {
        waking.incrementAndGet();
        try {
            if (closed) {
                return;
            }
            Posix.signal(eventFd, writeScratch);
        } finally {
            waking.decrementAndGet();
        }
    }

    /**
     * Sleeps until {@link #wake()}, one of {@code channelFds} is readable or a socket ready, or
     * {@code timeoutMillis} passed; the ready sockets' handlers are called. Allocates nothing.
     *
     * @param channelFds    completion channel fds, the first {@code count} of them
     * @param count         how many, at most 15 (the sockets are not counted)
     * @param timeoutMillis the most to sleep, 0 to check
     * @param ready         set to true at index i when channelFds[i] is readable
     */
    void await(int[] channelFds, int count, int timeoutMillis, boolean[] ready) {
        if (count >= MAX_FDS - 1) {
            throw new IllegalArgumentException("at most " + (MAX_FDS - 2) + " completion channels per thread: " + count);
        }
        Posix.pollfd(fds, 0, eventFd, Posix.POLLIN);
        for (int i = 0; i < count; i++) {
            Posix.pollfd(fds, i + 1, channelFds[i], Posix.POLLIN);
        }
        boolean withSockets = sockets.size() > 0;
        if (withSockets) {
            Posix.pollfd(fds, count + 1, sockets.fd(), Posix.POLLIN);
        }
        int rc = Posix.poll(fds, withSockets ? count + 2 : count + 1, timeoutMillis);
        for (int i = 0; i < count; i++) {
            ready[i] = rc > 0 && (Posix.revents(fds, i + 1) & Posix.POLLIN) != 0;
        }
        if (rc > 0 && (Posix.revents(fds, 0) & Posix.POLLIN) != 0) {
            Posix.drain(eventFd, readScratch);
        }
        socketsPolledAt = System.nanoTime();
        if (rc > 0 && withSockets && (Posix.revents(fds, count + 1) & Posix.POLLIN) != 0) {
            sockets.dispatch();
        }
    }

    /**
     * Between polls of the completion queues that do not block (busy polling, or a loop with work),
     * and so do not reach {@link #await}: once the sockets were last polled at least the interval
     * ago, looks at them without waiting and calls the ready ones' handlers; else only reads the
     * clock. So a busy loop makes at most one {@code epoll_wait} per interval for its sockets.
     *
     * @return the handlers called
     */
    int pollSocketsNow() {
        if (sockets.size() == 0) {
            return 0;
        }
        long now = System.nanoTime();
        if (now - socketsPolledAt < socketPollIntervalNanos) {
            return 0;
        }
        socketsPolledAt = now;
        return sockets.dispatch();
    }

    /** Closes the eventfd and frees the scratch memory, once; only after the owning thread ended. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        while (waking.get() != 0) {
            Thread.onSpinWait(); // a wake() that began before the close: its write ends in microseconds
        }
        Posix.close(eventFd);
        arena.close();
    }
}
