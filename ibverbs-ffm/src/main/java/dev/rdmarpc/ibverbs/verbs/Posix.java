package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.VerbsNative;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The few libc calls the verbs layer needs around file descriptors: {@code poll(2)} to wait on a
 * completion channel or the async event fd with a timeout, {@code fcntl(2)} to make those fds
 * non-blocking, an {@code eventfd(2)} to wake a waiting thread, and {@code if_indextoname(3)}.
 * errno is captured as {@link VerbsNative} does; each method is thread-safe and allocates nothing
 * after the thread's first capturing call (callers pass their own native scratch memory).
 */
final class Posix {
    static final int POLLIN = 0x1;
    static final short POLLERR = 0x8;
    static final short POLLHUP = 0x10;
    static final short POLLNVAL = 0x20;
    /** {@code sizeof(struct pollfd)}: int fd, short events, short revents. */
    static final long POLLFD_BYTES = 8;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;
    private static final int EFD_NONBLOCK = 04000;
    private static final int EFD_CLOEXEC = 02000000;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    private static final int IF_NAMESIZE = 16;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = capture("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FCNTL_GET = LINKER.downcallHandle(find("fcntl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.captureCallState("errno"));
    private static final MethodHandle FCNTL_SET = LINKER.downcallHandle(find("fcntl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2),
            Linker.Option.captureCallState("errno"));
    private static final MethodHandle EVENTFD = capture("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle WRITE = capture("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = capture("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    // The wake-up path (poll, read and write of an eventfd, on every wake-up of an event-mode I/O
    // thread) calls these, which capture no errno: a capturing call slices its call-state segment on
    // every call (the JDK's capture-segment check), an object only the full JIT removes, and not
    // always (the VM's RdmaAllocationTest saw about 40 bytes per wake-up in some runs). On a
    // failure, the capturing handle runs the call once more to learn errno.
    private static final MethodHandle POLL_FAST = LINKER.downcallHandle(find("poll"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle WRITE_FAST = LINKER.downcallHandle(find("write"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle READ_FAST = LINKER.downcallHandle(find("read"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle IF_INDEXTONAME =
            LINKER.downcallHandle(find("if_indextoname"), FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));

    private Posix() {
    }

    private static MemorySegment find(String name) {
        return LINKER.defaultLookup().find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
    }

    private static MethodHandle capture(String name, FunctionDescriptor descriptor) {
        return VerbsNative.downcallCapturingErrno(find(name), descriptor);
    }

    /** Fills one {@code struct pollfd} at {@code index} of {@code fds}. */
    static void pollfd(MemorySegment fds, int index, int fd, int events) {
        long base = index * POLLFD_BYTES;
        fds.set(JAVA_INT, base, fd);
        fds.set(JAVA_SHORT, base + 4, (short) events);
        fds.set(JAVA_SHORT, base + 6, (short) 0);
    }

    /** The {@code revents} of {@code struct pollfd} {@code index}. */
    static int revents(MemorySegment fds, int index) {
        return fds.get(JAVA_SHORT, index * POLLFD_BYTES + 6);
    }

    /**
     * {@code poll(fds, n, timeoutMillis)}, retried on EINTR with the remaining time.
     *
     * @param timeoutMillis -1 to wait forever, 0 to check
     * @return the number of ready descriptors, 0 on timeout
     */
    static int poll(MemorySegment fds, int n, int timeoutMillis) {
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        int wait = timeoutMillis;
        while (true) {
            int rc;
            try {
                rc = (int) POLL_FAST.invokeExact(fds, (long) n, wait);
            } catch (Throwable t) {
                throw new AssertionError("poll", t);
            }
            if (rc >= 0) {
                return rc;
            }
            // Failed (EINTR, or a bad argument): once more without waiting, capturing errno.
            MemorySegment state = VerbsNative.callState();
            try {
                rc = (int) POLL.invokeExact(state, fds, (long) n, 0);
            } catch (Throwable t) {
                throw new AssertionError("poll", t);
            }
            if (rc > 0) {
                return rc;
            }
            int errno = rc == 0 ? EINTR : VerbsNative.errno(state); // nothing ready now: as if interrupted
            if (errno != EINTR) {
                throw new VerbsException("poll", errno);
            }
            if (timeoutMillis > 0) {
                wait = (int) Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            }
        }
    }

    /** Sets {@code O_NONBLOCK} on {@code fd}. */
    static void setNonBlocking(int fd) {
        MemorySegment state = VerbsNative.callState();
        try {
            int flags = (int) FCNTL_GET.invokeExact(state, fd, F_GETFL);
            if (flags < 0) {
                throw new VerbsException("fcntl(F_GETFL)", VerbsNative.errno(state));
            }
            if ((flags & O_NONBLOCK) == 0 && (int) FCNTL_SET.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw new VerbsException("fcntl(F_SETFL)", VerbsNative.errno(state));
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("fcntl", t);
        }
    }

    /** A non-blocking, close-on-exec eventfd. */
    static int eventfd() {
        MemorySegment state = VerbsNative.callState();
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(state, 0, EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new AssertionError("eventfd", t);
        }
        if (fd < 0) {
            throw new VerbsException("eventfd", VerbsNative.errno(state));
        }
        return fd;
    }

    /** Adds 1 to an eventfd's counter (wakes its pollers); {@code scratch} holds 8 bytes. */
    static void signal(int eventfd, MemorySegment scratch) {
        scratch.set(JAVA_LONG, 0, 1L);
        try {
            if ((long) WRITE_FAST.invokeExact(eventfd, scratch, 8L) >= 0) {
                return;
            }
            MemorySegment state = VerbsNative.callState();
            long rc = (long) WRITE.invokeExact(state, eventfd, scratch, 8L);
            if (rc < 0 && VerbsNative.errno(state) != EAGAIN) {
                throw new VerbsException("write(eventfd)", VerbsNative.errno(state));
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("write", t);
        }
    }

    /** Resets an eventfd's counter; {@code scratch} holds 8 bytes. */
    static void drain(int eventfd, MemorySegment scratch) {
        try {
            long ignored = (long) READ_FAST.invokeExact(eventfd, scratch, 8L); // EAGAIN (already drained) is fine
        } catch (Throwable t) {
            throw new AssertionError("read", t);
        }
    }

    /** {@code close(fd)}; errors are ignored (the fd is gone either way on Linux). */
    static void close(int fd) {
        MemorySegment state = VerbsNative.callState();
        try {
            int ignored = (int) CLOSE.invokeExact(state, fd);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
    }

    /** The name of network interface {@code ifIndex}, or {@code null} when there is none. */
    static String ifIndexToName(int ifIndex) {
        if (ifIndex <= 0) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(IF_NAMESIZE);
            MemorySegment name = (MemorySegment) IF_INDEXTONAME.invokeExact(ifIndex, buf);
            return name.address() == 0 ? null : buf.getString(0);
        } catch (Throwable t) {
            throw new AssertionError("if_indextoname", t);
        }
    }
}
