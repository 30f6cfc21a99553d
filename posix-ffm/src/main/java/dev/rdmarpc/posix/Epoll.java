package dev.rdmarpc.posix;

import dev.rdmarpc.posix.raw.epoll_data;
import dev.rdmarpc.posix.raw.epoll_event;
import dev.rdmarpc.posix.raw.posix_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * {@code epoll(7)}: many descriptors behind one, which a thread that waits with {@link Posix#poll}
 * on descriptors of its own puts in its poll set as one more (an epoll descriptor is readable while
 * one of its descriptors is ready), and whose ready descriptors it then takes with {@link #await}
 * without waiting: the cost of a wait does not grow with the descriptors registered. Level
 * triggered. Events and registration data are {@code struct epoll_event}s in memory the caller
 * allocates ({@link #events}); each registration carries a {@code long} the caller chooses, given
 * back with its events.
 *
 * <p>Failures throw {@link PosixException} with the call's errno. Linux only; thread-safe as the C
 * library is. The caller owns the descriptor {@link #create} returns and closes it with
 * {@link Posix#close}.
 */
public final class Epoll {
    /** Readable (or, for a listening socket, a connection to accept). */
    public static final int IN = posix_h.EPOLLIN();
    /** Writable (or a connect finished). */
    public static final int OUT = posix_h.EPOLLOUT();
    /** An error on the descriptor; always reported. */
    public static final int ERR = posix_h.EPOLLERR();
    /** Hung up; always reported. */
    public static final int HUP = posix_h.EPOLLHUP();
    /** Bytes of one {@code struct epoll_event}. */
    public static final long EVENT_BYTES = epoll_event.sizeof();

    private static final long EVENTS = epoll_event.events$offset();
    private static final long DATA = epoll_event.data$offset() + epoll_data.u64$offset();
    private static final MethodHandle CREATE = capture(posix_h.epoll_create1$address(), posix_h.epoll_create1$descriptor());
    private static final MethodHandle CTL = capture(posix_h.epoll_ctl$address(), posix_h.epoll_ctl$descriptor());
    private static final MethodHandle WAIT = capture(posix_h.epoll_wait$address(), posix_h.epoll_wait$descriptor());

    private Epoll() {
    }

    private static MethodHandle capture(MemorySegment function, FunctionDescriptor descriptor) {
        return Linker.nativeLinker().downcallHandle(function, descriptor, Linker.Option.captureCallState("errno"));
    }

    /** @return a new epoll descriptor (close-on-exec), owned by the caller */
    public static int create() {
        MemorySegment state = Posix.callState();
        int fd;
        try {
            fd = (int) CREATE.invokeExact(state, posix_h.EPOLL_CLOEXEC());
        } catch (Throwable t) {
            throw new AssertionError("epoll_create1", t);
        }
        if (fd < 0) {
            throw new PosixException("epoll_create1", Posix.errno(state));
        }
        return fd;
    }

    /** @return room for {@code n} events, in {@code arena} */
    public static MemorySegment events(Arena arena, int n) {
        return arena.allocate(epoll_event.layout(), n);
    }

    /** Starts watching {@code fd} for {@code events} ({@link #IN}, {@link #OUT}); {@code data} comes back with its events. */
    public static void add(int epfd, int fd, int events, long data, MemorySegment scratch) {
        control(epfd, posix_h.EPOLL_CTL_ADD(), fd, events, data, scratch, "epoll_ctl(ADD)");
    }

    /** Watches {@code fd} for {@code events} from now on. */
    public static void modify(int epfd, int fd, int events, long data, MemorySegment scratch) {
        control(epfd, posix_h.EPOLL_CTL_MOD(), fd, events, data, scratch, "epoll_ctl(MOD)");
    }

    /** Stops watching {@code fd} (before it is closed). */
    public static void remove(int epfd, int fd, MemorySegment scratch) {
        control(epfd, posix_h.EPOLL_CTL_DEL(), fd, 0, 0, scratch, "epoll_ctl(DEL)");
    }

    private static void control(int epfd, int op, int fd, int events, long data, MemorySegment scratch, String what) {
        scratch.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, EVENTS, events);
        scratch.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, DATA, data);
        MemorySegment state = Posix.callState();
        int rc;
        try {
            rc = (int) CTL.invokeExact(state, epfd, op, fd, scratch);
        } catch (Throwable t) {
            throw new AssertionError(what, t);
        }
        if (rc < 0) {
            throw new PosixException(what, Posix.errno(state));
        }
    }

    /**
     * Takes the events of up to {@code max} ready descriptors into {@code events}.
     *
     * @param timeoutMillis 0 to take what is ready now, -1 to wait
     * @return how many events were written (0: none ready, or interrupted)
     */
    public static int await(int epfd, MemorySegment events, int max, int timeoutMillis) {
        MemorySegment state = Posix.callState();
        int n;
        try {
            n = (int) WAIT.invokeExact(state, epfd, events, max, timeoutMillis);
        } catch (Throwable t) {
            throw new AssertionError("epoll_wait", t);
        }
        if (n < 0) {
            int errno = Posix.errno(state);
            if (errno == Posix.EINTR) {
                return 0;
            }
            throw new PosixException("epoll_wait", errno);
        }
        return n;
    }

    /** @return the event mask of event {@code i} of {@code events} */
    public static int mask(MemorySegment events, int i) {
        return events.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, i * EVENT_BYTES + EVENTS);
    }

    /** @return the data of event {@code i}, as its registration gave it */
    public static long data(MemorySegment events, int i) {
        return events.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i * EVENT_BYTES + DATA);
    }
}
