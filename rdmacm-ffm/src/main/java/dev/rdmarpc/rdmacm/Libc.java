package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The two C library calls an event channel needs to wait with a timeout: {@code fcntl(2)} to make
 * the channel's fd non-blocking and {@code poll(2)} to wait for it. Linux ABI (x86-64 and aarch64
 * share these constants). Errno is captured like the librdmacm calls.
 */
final class Libc {
    static final int EINTR = 4;
    static final short POLLIN = 0x001;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 0x800;

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    static final StructLayout POLLFD = MemoryLayout.structLayout(
            JAVA_INT.withName("fd"), JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));
    static final long POLLFD_FD = POLLFD.byteOffset(MemoryLayout.PathElement.groupElement("fd"));
    static final long POLLFD_EVENTS = POLLFD.byteOffset(MemoryLayout.PathElement.groupElement("events"));
    static final long POLLFD_REVENTS = POLLFD.byteOffset(MemoryLayout.PathElement.groupElement("revents"));

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = VerbsNative.downcallCapturingErrno(
            LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FCNTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("fcntl").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));

    private Libc() {
    }

    /**
     * {@code poll(fds, 1, timeoutMs)} on one {@link #POLLFD}.
     *
     * @return the number of ready descriptors (0 on timeout), or -1 when interrupted (EINTR)
     * @throws RdmaCmException for any other failure
     */
    static int poll(MemorySegment pollfd, int timeoutMs) {
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) POLL.invokeExact(state, pollfd, 1L, timeoutMs);
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        }
        if (rc >= 0) {
            return rc;
        }
        int errno = VerbsNative.errno(state);
        if (errno == EINTR) {
            return -1;
        }
        throw new RdmaCmException("poll", errno);
    }

    /** Sets {@code O_NONBLOCK} on {@code fd}. */
    static void setNonBlocking(int fd) {
        MemorySegment state = VerbsNative.callState();
        try {
            int flags = (int) FCNTL.invokeExact(state, fd, F_GETFL, 0);
            if (flags < 0) {
                throw new RdmaCmException("fcntl(F_GETFL)", VerbsNative.errno(state));
            }
            if ((int) FCNTL.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw new RdmaCmException("fcntl(F_SETFL, O_NONBLOCK)", VerbsNative.errno(state));
            }
        } catch (RdmaCmException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("fcntl", t);
        }
    }
}
