package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.posix.PosixException;

import java.lang.foreign.MemorySegment;

/**
 * The libc calls the verbs layer makes around file descriptors ({@code poll(2)} on a completion
 * channel or the async event fd, {@code fcntl(2)}, an {@code eventfd(2)} to wake a waiting thread,
 * {@code if_indextoname(3)}), through {@link dev.rdmarpc.posix.Posix} of module
 * {@code dev.rdmarpc.posix}; a failure is reported as this layer's {@link VerbsException} with the
 * same operation and errno. Thread-safe; the wake-up path allocates nothing.
 */
final class Posix {
    static final int POLLIN = dev.rdmarpc.posix.Posix.POLLIN;
    static final short POLLERR = dev.rdmarpc.posix.Posix.POLLERR;
    static final short POLLHUP = dev.rdmarpc.posix.Posix.POLLHUP;
    static final short POLLNVAL = dev.rdmarpc.posix.Posix.POLLNVAL;
    static final long POLLFD_BYTES = dev.rdmarpc.posix.Posix.POLLFD_BYTES;
    static final int EINTR = dev.rdmarpc.posix.Posix.EINTR;
    static final int EAGAIN = dev.rdmarpc.posix.Posix.EAGAIN;

    private Posix() {
    }

    private static VerbsException verbs(PosixException e) {
        return new VerbsException(e.operation(), e.errno());
    }

    /** Fills one {@code struct pollfd} at {@code index} of {@code fds}. */
    static void pollfd(MemorySegment fds, int index, int fd, int events) {
        dev.rdmarpc.posix.Posix.pollfd(fds, index, fd, events);
    }

    /** The {@code revents} of {@code struct pollfd} {@code index}. */
    static int revents(MemorySegment fds, int index) {
        return dev.rdmarpc.posix.Posix.revents(fds, index);
    }

    /**
     * {@code poll(fds, n, timeoutMillis)}, retried on EINTR with the remaining time.
     *
     * @param timeoutMillis -1 to wait forever, 0 to check
     * @return the number of ready descriptors, 0 on timeout
     */
    static int poll(MemorySegment fds, int n, int timeoutMillis) {
        try {
            return dev.rdmarpc.posix.Posix.poll(fds, n, timeoutMillis);
        } catch (PosixException e) {
            throw verbs(e);
        }
    }

    /** Sets {@code O_NONBLOCK} on {@code fd}. */
    static void setNonBlocking(int fd) {
        try {
            dev.rdmarpc.posix.Posix.setNonBlocking(fd);
        } catch (PosixException e) {
            throw verbs(e);
        }
    }

    /** A non-blocking, close-on-exec eventfd. */
    static int eventfd() {
        try {
            return dev.rdmarpc.posix.Posix.eventfd();
        } catch (PosixException e) {
            throw verbs(e);
        }
    }

    /** Adds 1 to an eventfd's counter (wakes its pollers); {@code scratch} holds 8 bytes. */
    static void signal(int eventfd, MemorySegment scratch) {
        try {
            dev.rdmarpc.posix.Posix.signal(eventfd, scratch);
        } catch (PosixException e) {
            throw verbs(e);
        }
    }

    /** Resets an eventfd's counter; {@code scratch} holds 8 bytes. Errors are ignored. */
    static void drain(int eventfd, MemorySegment scratch) {
        try {
            dev.rdmarpc.posix.Posix.drain(eventfd, scratch);
        } catch (PosixException e) {
            // as before: the next poll reports a descriptor that is not open (POLLNVAL)
        }
    }

    /** {@code close(fd)}; errors are ignored (the fd is gone either way on Linux). */
    static void close(int fd) {
        dev.rdmarpc.posix.Posix.close(fd);
    }

    /** The name of network interface {@code ifIndex}, or {@code null} when there is none. */
    static String ifIndexToName(int ifIndex) {
        return dev.rdmarpc.posix.Posix.ifIndexToName(ifIndex);
    }
}
