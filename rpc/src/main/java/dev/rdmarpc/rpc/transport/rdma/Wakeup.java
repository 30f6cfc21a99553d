package dev.rdmarpc.rpc.transport.rdma;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * What an RDMA I/O thread sleeps on: {@code poll(2)} over an {@code eventfd(2)} (so other threads
 * can wake it) and the file descriptors of its completion channels. The verbs layer waits on one
 * channel at a time and keeps its own libc helper private, so this is the transport's minimal
 * private helper: five libc calls, no errno needed (a failed or interrupted poll is a spurious
 * wake-up, which the loop tolerates).
 *
 * <p>Ownership: the loop creates one and closes it once, after its thread ended. {@link #wake()} is
 * thread-safe; {@link #await} is for the owning thread.
 */
final class Wakeup implements AutoCloseable {
    private static final int POLLIN = 0x1;
    private static final long POLLFD_BYTES = 8;
    private static final int EFD_NONBLOCK = 04000;
    private static final int EFD_CLOEXEC = 02000000;
    private static final int MAX_FDS = 16;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = handle("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle EVENTFD = handle("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle WRITE = handle("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle READ = handle("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final Arena arena = Arena.ofShared();
    private final MemorySegment fds = arena.allocate(POLLFD_BYTES * MAX_FDS, 8);
    private final MemorySegment writeScratch = arena.allocate(8, 8);
    private final MemorySegment readScratch = arena.allocate(8, 8);
    private final int eventFd;
    private volatile boolean closed;
    /** Threads inside {@link #wake()}: close waits for them, so no write can hit a reused fd number. */
    private final java.util.concurrent.atomic.AtomicInteger waking = new java.util.concurrent.atomic.AtomicInteger();

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        MemorySegment f = LINKER.defaultLookup().find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(f, fd);
    }

    Wakeup() {
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(0, EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new AssertionError("eventfd", t);
        }
        if (fd < 0) {
            arena.close();
            throw new IllegalStateException("eventfd failed: the RDMA I/O thread cannot be woken");
        }
        this.eventFd = fd;
        writeScratch.set(JAVA_LONG, 0, 1L);
    }

    /** Wakes the thread in {@link #await}, or makes its next call return at once. Allocates nothing. */
    void wake() {
        waking.incrementAndGet();
        try {
            if (closed) {
                return;
            }
            long ignored = (long) WRITE.invokeExact(eventFd, writeScratch, 8L);
        } catch (Throwable t) {
            throw new AssertionError("write", t);
        } finally {
            waking.decrementAndGet();
        }
    }

    /**
     * Sleeps until {@link #wake()} or one of {@code channelFds} is readable, or {@code timeoutMillis}
     * passed. Allocates nothing.
     *
     * @param channelFds    completion channel fds, the first {@code count} of them
     * @param count         how many, at most 15
     * @param timeoutMillis the most to sleep, 0 to check
     * @param ready         set to true at index i when channelFds[i] is readable
     */
    void await(int[] channelFds, int count, int timeoutMillis, boolean[] ready) {
        if (count >= MAX_FDS) {
            throw new IllegalArgumentException("at most " + (MAX_FDS - 1) + " completion channels per thread: " + count);
        }
        setPollFd(0, eventFd);
        for (int i = 0; i < count; i++) {
            setPollFd(i + 1, channelFds[i]);
        }
        int rc;
        try {
            rc = (int) POLL.invokeExact(fds, (long) (count + 1), timeoutMillis);
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        }
        for (int i = 0; i < count; i++) {
            ready[i] = rc > 0 && (revents(i + 1) & POLLIN) != 0;
        }
        if (rc > 0 && (revents(0) & POLLIN) != 0) {
            try {
                long ignored = (long) READ.invokeExact(eventFd, readScratch, 8L);
            } catch (Throwable t) {
                throw new AssertionError("read", t);
            }
        }
    }

    private void setPollFd(int i, int fd) {
        long base = i * POLLFD_BYTES;
        fds.set(JAVA_INT, base, fd);
        fds.set(JAVA_SHORT, base + 4, (short) POLLIN);
        fds.set(JAVA_SHORT, base + 6, (short) 0);
    }

    private int revents(int i) {
        return fds.get(JAVA_SHORT, i * POLLFD_BYTES + 6);
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
        try {
            int ignored = (int) CLOSE.invokeExact(eventFd);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
        arena.close();
    }
}
