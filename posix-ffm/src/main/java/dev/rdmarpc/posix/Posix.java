package dev.rdmarpc.posix;

import dev.rdmarpc.posix.raw.cpu_set_t;
import dev.rdmarpc.posix.raw.pollfd;
import dev.rdmarpc.posix.raw.posix_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C library calls rdmarpc makes around file descriptors: {@code poll(2)} to wait on several
 * with a timeout, {@code fcntl(2)} to make one non-blocking, an {@code eventfd(2)} to wake a
 * waiting thread ({@link #signal}, {@link #drain}), {@code close(2)}, {@code if_indextoname(3)} and
 * {@code getpagesize(2)}; on the generated bindings of {@code dev.rdmarpc.posix.raw}.
 *
 * <p>A failure throws {@link PosixException} with the call's errno, captured by the JDK
 * ({@link Linker.Option#captureCallState(String...) captureCallState("errno")}) into a call-state
 * segment allocated once per thread. The wake-up path ({@link #poll}, {@link #signal},
 * {@link #drain}, run on every wake-up of an I/O thread) calls the C functions without capturing
 * and allocates nothing: a capturing call slices its call-state segment on every call, an object
 * only the full JIT removes, and not always. When such a call fails, the capturing handle runs it
 * once more to learn errno.
 *
 * <p>Every method is thread-safe. Linux (glibc) only.
 */
public final class Posix {
    /** {@code POLLIN}: there is data to read. */
    public static final short POLLIN = (short) posix_h.POLLIN();
    /** {@code POLLERR}: an error condition (output only). */
    public static final short POLLERR = (short) posix_h.POLLERR();
    /** {@code POLLHUP}: hung up (output only). */
    public static final short POLLHUP = (short) posix_h.POLLHUP();
    /** {@code POLLNVAL}: the descriptor is not open (output only). */
    public static final short POLLNVAL = (short) posix_h.POLLNVAL();
    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    public static final StructLayout POLLFD = (StructLayout) pollfd.layout();
    /** {@code sizeof(struct pollfd)}: the stride of a pollfd array. */
    public static final long POLLFD_BYTES = pollfd.sizeof();
    /** Offset of {@code fd} in {@code struct pollfd}. */
    public static final long POLLFD_FD = pollfd.fd$offset();
    /** Offset of {@code events} in {@code struct pollfd}. */
    public static final long POLLFD_EVENTS = pollfd.events$offset();
    /** Offset of {@code revents} in {@code struct pollfd}. */
    public static final long POLLFD_REVENTS = pollfd.revents$offset();
    /** {@code EINTR}: interrupted by a signal. */
    public static final int EINTR = posix_h.EINTR();
    /** {@code EAGAIN}: would block. */
    public static final int EAGAIN = posix_h.EAGAIN();
    /** {@code EINVAL}: invalid argument. */
    public static final int EINVAL = posix_h.EINVAL();
    /** {@code EBADF}: not an open file descriptor. */
    public static final int EBADF = posix_h.EBADF();

    private static final int F_GETFL = posix_h.F_GETFL();
    private static final int F_SETFL = posix_h.F_SETFL();
    private static final int O_NONBLOCK = posix_h.O_NONBLOCK();
    private static final int EFD_FLAGS = posix_h.EFD_NONBLOCK() | posix_h.EFD_CLOEXEC();
    private static final int IF_NAMESIZE = posix_h.IF_NAMESIZE();

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CALL_STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<MemorySegment> CALL_STATE =
            ThreadLocal.withInitial(() -> Arena.global().allocate(CALL_STATE_LAYOUT));

    private static final MethodHandle POLL = capture(posix_h.poll$address(), posix_h.poll$descriptor());
    private static final MethodHandle EVENTFD = capture(posix_h.eventfd$address(), posix_h.eventfd$descriptor());
    private static final MethodHandle WRITE = capture(posix_h.write$address(), posix_h.write$descriptor());
    private static final MethodHandle READ = capture(posix_h.read$address(), posix_h.read$descriptor());
    private static final MethodHandle CLOSE = capture(posix_h.close$address(), posix_h.close$descriptor());
    /** {@code fcntl(fd, cmd, int)}: the variadic third argument as an int. */
    private static final MethodHandle FCNTL = LINKER.downcallHandle(posix_h.fcntl.address(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2), CAPTURE_ERRNO);
    static final MethodHandle SCHED_SETAFFINITY =
            capture(posix_h.sched_setaffinity$address(), posix_h.sched_setaffinity$descriptor());
    static final MethodHandle SCHED_GETAFFINITY =
            capture(posix_h.sched_getaffinity$address(), posix_h.sched_getaffinity$descriptor());

    private Posix() {
    }

    private static MethodHandle capture(MemorySegment function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(function, descriptor, CAPTURE_ERRNO);
    }

    /** This thread's call-state segment, allocated on its first capturing call and reused after. */
    static MemorySegment callState() {
        return CALL_STATE.get();
    }

    /** The errno a capturing call stored in {@code callState}. */
    static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    /** @return the C library's text for {@code errno} ({@code strerror}) */
    public static String strerror(int errno) {
        MemorySegment text = posix_h.strerror(errno);
        return text.address() == 0 ? "errno " + errno : text.reinterpret(256).getString(0);
    }

    // ---------------------------------------------------------------- poll

    /** Fills {@code struct pollfd} number {@code index} of the array {@code fds}. */
    public static void pollfd(MemorySegment fds, int index, int fd, int events) {
        long base = index * POLLFD_BYTES;
        fds.set(JAVA_INT, base + POLLFD_FD, fd);
        fds.set(JAVA_SHORT, base + POLLFD_EVENTS, (short) events);
        fds.set(JAVA_SHORT, base + POLLFD_REVENTS, (short) 0);
    }

    /** @return the {@code revents} of {@code struct pollfd} number {@code index} of {@code fds} */
    public static int revents(MemorySegment fds, int index) {
        return fds.get(JAVA_SHORT, index * POLLFD_BYTES + POLLFD_REVENTS);
    }

    /**
     * {@code poll(fds, n, timeoutMillis)}, retried on EINTR with the remaining time. Allocates
     * nothing unless the call fails.
     *
     * @param fds           {@code n} {@code struct pollfd}s ({@link #pollfd})
     * @param timeoutMillis -1 to wait forever, 0 to check
     * @return the number of descriptors with events, 0 on timeout
     * @throws PosixException when poll fails other than by EINTR (EINVAL: too many descriptors)
     */
    public static int poll(MemorySegment fds, int n, int timeoutMillis) {
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        int wait = timeoutMillis;
        while (true) {
            int rc = posix_h.poll(fds, n, wait);
            if (rc >= 0) {
                return rc;
            }
            // Failed (EINTR, or a bad argument): once more without waiting, capturing errno.
            MemorySegment state = callState();
            try {
                rc = (int) POLL.invokeExact(state, fds, (long) n, 0);
            } catch (Throwable t) {
                throw new AssertionError("poll", t);
            }
            if (rc > 0) {
                return rc;
            }
            int errno = rc == 0 ? EINTR : errno(state); // nothing ready now: as if interrupted
            if (errno != EINTR) {
                throw new PosixException("poll", errno);
            }
            if (timeoutMillis > 0) {
                wait = (int) Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            }
        }
    }

    // ---------------------------------------------------------------- descriptors

    /**
     * Sets {@code O_NONBLOCK} on {@code fd} (leaves its other flags).
     *
     * @throws PosixException when fcntl fails (EBADF: not an open descriptor)
     */
    public static void setNonBlocking(int fd) {
        MemorySegment state = callState();
        try {
            int flags = (int) FCNTL.invokeExact(state, fd, F_GETFL, 0);
            if (flags < 0) {
                throw new PosixException("fcntl(F_GETFL)", errno(state));
            }
            if ((flags & O_NONBLOCK) == 0 && (int) FCNTL.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw new PosixException("fcntl(F_SETFL)", errno(state));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("fcntl", t);
        }
    }

    /** @return whether {@code O_NONBLOCK} is set on {@code fd} */
    public static boolean isNonBlocking(int fd) {
        MemorySegment state = callState();
        int flags;
        try {
            flags = (int) FCNTL.invokeExact(state, fd, F_GETFL, 0);
        } catch (Throwable t) {
            throw new AssertionError("fcntl", t);
        }
        if (flags < 0) {
            throw new PosixException("fcntl(F_GETFL)", errno(state));
        }
        return (flags & O_NONBLOCK) != 0;
    }

    /**
     * @return a new non-blocking, close-on-exec eventfd with counter 0; the caller owns it
     *         ({@link #close})
     * @throws PosixException when eventfd fails (EMFILE: too many open files)
     */
    public static int eventfd() {
        MemorySegment state = callState();
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(state, 0, EFD_FLAGS);
        } catch (Throwable t) {
            throw new AssertionError("eventfd", t);
        }
        if (fd < 0) {
            throw new PosixException("eventfd", errno(state));
        }
        return fd;
    }

    /**
     * Adds 1 to an eventfd's counter, which wakes its pollers. Allocates nothing unless the write
     * fails; EAGAIN (the counter is full, its pollers are awake anyway) is not a failure.
     *
     * @param scratch 8 bytes of native memory the caller owns
     * @throws PosixException when the write fails otherwise (EBADF: not open)
     */
    public static void signal(int eventfd, MemorySegment scratch) {
        scratch.set(JAVA_LONG, 0, 1L);
        if (posix_h.write(eventfd, scratch, 8L) >= 0) {
            return;
        }
        MemorySegment state = callState();
        long rc;
        try {
            rc = (long) WRITE.invokeExact(state, eventfd, scratch, 8L);
        } catch (Throwable t) {
            throw new AssertionError("write", t);
        }
        if (rc < 0 && errno(state) != EAGAIN) {
            throw new PosixException("write(eventfd)", errno(state));
        }
    }

    /**
     * Resets an eventfd's counter to 0. Allocates nothing unless the read fails; EAGAIN (already
     * 0) is not a failure.
     *
     * @param scratch 8 bytes of native memory the caller owns
     * @return the counter's value before, 0 when it was 0 already
     * @throws PosixException when the read fails otherwise (EBADF: not open)
     */
    public static long drain(int eventfd, MemorySegment scratch) {
        if (posix_h.read(eventfd, scratch, 8L) == 8) {
            return scratch.get(JAVA_LONG, 0);
        }
        MemorySegment state = callState();
        long rc;
        try {
            rc = (long) READ.invokeExact(state, eventfd, scratch, 8L);
        } catch (Throwable t) {
            throw new AssertionError("read", t);
        }
        if (rc == 8) {
            return scratch.get(JAVA_LONG, 0);
        }
        if (rc < 0 && errno(state) != EAGAIN) {
            throw new PosixException("read(eventfd)", errno(state));
        }
        return 0;
    }

    /**
     * {@code close(fd)}. The descriptor is released even when close reports an error (Linux), so
     * the caller must not close it again either way.
     *
     * @return 0, or the errno close reported (EBADF: it was not open; EIO: a deferred write failed)
     */
    public static int close(int fd) {
        MemorySegment state = callState();
        int rc;
        try {
            rc = (int) CLOSE.invokeExact(state, fd);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
        return rc == 0 ? 0 : errno(state);
    }

    /** @return the name of network interface {@code ifIndex}, or {@code null} when there is none */
    public static String ifIndexToName(int ifIndex) {
        if (ifIndex <= 0) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(IF_NAMESIZE);
            MemorySegment name = posix_h.if_indextoname(ifIndex, buf);
            return name.address() == 0 ? null : buf.getString(0);
        }
    }

    /** @return the host's page size in bytes ({@code getpagesize()}) */
    public static long pageSize() {
        return posix_h.getpagesize();
    }

    /** @return {@code sizeof(cpu_set_t)}, the bytes of a CPU mask ({@link ThreadAffinity}) */
    static long cpuSetBytes() {
        return cpu_set_t.sizeof();
    }
}
