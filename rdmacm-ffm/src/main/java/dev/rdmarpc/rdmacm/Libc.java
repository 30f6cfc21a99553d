package dev.rdmarpc.rdmacm;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.PosixException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * The two C library calls an event channel needs to wait with a timeout: {@code fcntl(2)} to make
 * the channel's fd non-blocking and {@code poll(2)} to wait for it, through
 * {@link dev.rdmarpc.posix.Posix} of module {@code dev.rdmarpc.posix}; a failure is reported as an
 * {@link RdmaCmException} with the same operation and errno.
 */
final class Libc {
    static final short POLLIN = Posix.POLLIN;

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    static final StructLayout POLLFD = Posix.POLLFD;
    static final long POLLFD_FD = Posix.POLLFD_FD;
    static final long POLLFD_EVENTS = Posix.POLLFD_EVENTS;
    static final long POLLFD_REVENTS = Posix.POLLFD_REVENTS;

    private Libc() {
    }

    /**
     * {@code poll(fds, 1, timeoutMs)} on one {@link #POLLFD}, retried on EINTR with the remaining
     * time.
     *
     * @return the number of ready descriptors (0 on timeout)
     * @throws RdmaCmException when poll fails
     */
    static int poll(MemorySegment pollfd, int timeoutMs) {
        try {
            return Posix.poll(pollfd, 1, timeoutMs);
        } catch (PosixException e) {
            throw new RdmaCmException(e.operation(), e.errno());
        }
    }

    /** Sets {@code O_NONBLOCK} on {@code fd}. */
    static void setNonBlocking(int fd) {
        try {
            Posix.setNonBlocking(fd);
        } catch (PosixException e) {
            throw new RdmaCmException(e.operation(), e.errno());
        }
    }
}
