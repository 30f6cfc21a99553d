package dev.rdmarpc.posix;

import dev.rdmarpc.posix.raw.posix_h;
import dev.rdmarpc.posix.raw.sockaddr_in;
import dev.rdmarpc.posix.raw.sockaddr_in6;
import dev.rdmarpc.posix.raw.sockaddr_storage;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Non-blocking TCP sockets as plain file descriptors, for a thread that waits on them with
 * {@link Posix#poll} beside descriptors of its own (completion channels, an eventfd), which a
 * {@code java.nio.channels.Selector} cannot join. Every socket made here is non-blocking and
 * close-on-exec; the caller owns it and closes it with {@link Posix#close}.
 *
 * <p>Reading and writing follow {@code SocketChannel}'s conventions: {@link #receive} returns the
 * bytes read, 0 when there is nothing to read now (EAGAIN) and -1 at the end of the stream (the peer
 * shut down its output); {@link #send} returns the bytes written, 0 when the socket's send buffer is
 * full (EAGAIN). Both allocate nothing unless the call fails but the slice of the buffer they hand
 * the C library (which the JIT usually removes); like {@link Posix#poll}, a failed call is made once more through a handle that captures errno, and that second call's result counts
 * (a failed call moved no bytes). Sending never raises SIGPIPE ({@code MSG_NOSIGNAL}): a write to a
 * connection the peer reset fails with EPIPE or ECONNRESET.
 *
 * <p>Any other failure throws {@link PosixException} with the call's errno. Every method is
 * thread-safe as far as the C library is; one socket is meant to be used by one thread. Linux only.
 */
public final class Sockets {
    /** {@code POLLOUT}: writing will not block (for a connecting socket: the connect finished). */
    public static final short POLLOUT = (short) posix_h.POLLOUT();
    /** {@code EINPROGRESS}: a non-blocking connect goes on in the background. */
    public static final int EINPROGRESS = posix_h.EINPROGRESS();
    /** {@code ECONNREFUSED}: nothing listens at the address connected to. */
    public static final int ECONNREFUSED = posix_h.ECONNREFUSED();
    /** {@code ECONNRESET}: the peer reset the connection. */
    public static final int ECONNRESET = posix_h.ECONNRESET();
    /** {@code EPIPE}: written after the connection was shut down or reset. */
    public static final int EPIPE = posix_h.EPIPE();
    /** {@code ENOTCONN}: the socket is not connected (yet). */
    public static final int ENOTCONN = posix_h.ENOTCONN();
    /** {@code EADDRINUSE}: the address to listen on is taken. */
    public static final int EADDRINUSE = posix_h.EADDRINUSE();

    private static final int AF_INET = posix_h.AF_INET();
    private static final int AF_INET6 = posix_h.AF_INET6();
    private static final int STREAM = posix_h.SOCK_STREAM() | posix_h.SOCK_NONBLOCK() | posix_h.SOCK_CLOEXEC();
    private static final int ACCEPT_FLAGS = posix_h.SOCK_NONBLOCK() | posix_h.SOCK_CLOEXEC();
    private static final int SOL_SOCKET = posix_h.SOL_SOCKET();
    private static final int IPPROTO_TCP = posix_h.IPPROTO_TCP();
    private static final int MSG_NOSIGNAL = posix_h.MSG_NOSIGNAL();
    private static final ValueLayout.OfShort PORT = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

    private static final MethodHandle SOCKET = capture(posix_h.socket$address(), posix_h.socket$descriptor());
    private static final MethodHandle BIND = capture(posix_h.bind$address(), posix_h.bind$descriptor());
    private static final MethodHandle LISTEN = capture(posix_h.listen$address(), posix_h.listen$descriptor());
    private static final MethodHandle ACCEPT4 = capture(posix_h.accept4$address(), posix_h.accept4$descriptor());
    private static final MethodHandle CONNECT = capture(posix_h.connect$address(), posix_h.connect$descriptor());
    private static final MethodHandle GETSOCKOPT = capture(posix_h.getsockopt$address(), posix_h.getsockopt$descriptor());
    private static final MethodHandle SETSOCKOPT = capture(posix_h.setsockopt$address(), posix_h.setsockopt$descriptor());
    private static final MethodHandle GETSOCKNAME = capture(posix_h.getsockname$address(), posix_h.getsockname$descriptor());
    private static final MethodHandle GETPEERNAME = capture(posix_h.getpeername$address(), posix_h.getpeername$descriptor());
    private static final MethodHandle SEND = capture(posix_h.send$address(), posix_h.send$descriptor());
    private static final MethodHandle RECV = capture(posix_h.recv$address(), posix_h.recv$descriptor());
    private static final MethodHandle SHUTDOWN = capture(posix_h.shutdown$address(), posix_h.shutdown$descriptor());

    private Sockets() {
    }

    private static MethodHandle capture(MemorySegment function, FunctionDescriptor descriptor) {
        return Linker.nativeLinker().downcallHandle(function, descriptor, Linker.Option.captureCallState("errno"));
    }

    // ---------------------------------------------------------------- opening

    /**
     * A listening socket bound to {@code address} (port 0: one the system picks, see
     * {@link #localAddress}), with SO_REUSEADDR set so that a restarted server binds again at once.
     *
     * @param backlog connections the kernel queues before they are accepted
     * @return its descriptor, owned by the caller
     * @throws PosixException           when a call fails (EADDRINUSE: the address is taken)
     * @throws IllegalArgumentException for an unresolved address
     */
    public static int listen(InetSocketAddress address, int backlog) {
        int fd = open(address);
        try (Arena arena = Arena.ofConfined()) {
            setInt(fd, SOL_SOCKET, posix_h.SO_REUSEADDR(), 1, "setsockopt(SO_REUSEADDR)");
            MemorySegment addr = sockaddr(arena, address);
            MemorySegment state = Posix.callState();
            check((int) BIND.invokeExact(state, fd, addr, (int) addr.byteSize()), state, "bind(" + address + ")");
            check((int) LISTEN.invokeExact(state, fd, backlog), state, "listen");
            return fd;
        } catch (Throwable t) {
            Posix.close(fd);
            throw rethrow(t, "listen");
        }
    }

    /**
     * Accepts one waiting connection of a listening socket.
     *
     * @return the new connection's descriptor (non-blocking, owned by the caller), or -1 when none
     *         is waiting (EAGAIN)
     * @throws PosixException when accept fails otherwise (EMFILE: too many open files)
     */
    public static int accept(int listenFd) {
        MemorySegment state = Posix.callState();
        int fd;
        try {
            fd = (int) ACCEPT4.invokeExact(state, listenFd, MemorySegment.NULL, MemorySegment.NULL, ACCEPT_FLAGS);
        } catch (Throwable t) {
            throw new AssertionError("accept4", t);
        }
        if (fd >= 0) {
            return fd;
        }
        int errno = Posix.errno(state);
        if (errno == Posix.EAGAIN || errno == Posix.EINTR) {
            return -1;
        }
        throw new PosixException("accept4", errno);
    }

    /**
     * Starts connecting a new socket to {@code address}. A connection to this host may be made at
     * once; otherwise it goes on in the background: wait for {@link #POLLOUT} on the descriptor,
     * then {@link #finishConnect}.
     *
     * @return the new socket's descriptor, owned by the caller
     * @throws PosixException           when connecting fails at once (ECONNREFUSED, ENETUNREACH)
     * @throws IllegalArgumentException for an unresolved address
     */
    public static int connect(InetSocketAddress address) {
        int fd = open(address);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = sockaddr(arena, address);
            MemorySegment state = Posix.callState();
            int rc = (int) CONNECT.invokeExact(state, fd, addr, (int) addr.byteSize());
            if (rc < 0 && Posix.errno(state) != EINPROGRESS) {
                throw new PosixException("connect(" + address + ")", Posix.errno(state));
            }
            return fd;
        } catch (Throwable t) {
            Posix.close(fd);
            throw rethrow(t, "connect");
        }
    }

    /**
     * Whether a connect {@link #connect} started has finished.
     *
     * @return true when connected, false while it goes on
     * @throws PosixException when it failed: the errno is the connect's (SO_ERROR, e.g.
     *                        ECONNREFUSED or ETIMEDOUT)
     */
    public static boolean finishConnect(int fd) {
        int error = getInt(fd, SOL_SOCKET, posix_h.SO_ERROR(), "getsockopt(SO_ERROR)");
        if (error != 0) {
            throw new PosixException("connect", error);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(sockaddr_storage.layout());
            MemorySegment len = arena.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, (int) addr.byteSize());
            MemorySegment state = Posix.callState();
            int rc = (int) GETPEERNAME.invokeExact(state, fd, addr, len);
            if (rc == 0) {
                return true;
            }
            if (Posix.errno(state) == ENOTCONN) {
                return false;
            }
            throw new PosixException("getpeername", Posix.errno(state));
        } catch (Throwable t) {
            throw rethrow(t, "getpeername");
        }
    }

    private static int open(InetSocketAddress address) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address " + address);
        }
        int family = address.getAddress() instanceof Inet6Address ? AF_INET6 : AF_INET;
        MemorySegment state = Posix.callState();
        int fd;
        try {
            fd = (int) SOCKET.invokeExact(state, family, STREAM, 0);
        } catch (Throwable t) {
            throw new AssertionError("socket", t);
        }
        if (fd < 0) {
            throw new PosixException("socket", Posix.errno(state));
        }
        return fd;
    }

    // ---------------------------------------------------------------- options and addresses

    /** Sets or clears TCP_NODELAY (no Nagle delay for small writes). */
    public static void setNoDelay(int fd, boolean on) {
        setInt(fd, IPPROTO_TCP, posix_h.TCP_NODELAY(), on ? 1 : 0, "setsockopt(TCP_NODELAY)");
    }

    /** @return whether TCP_NODELAY is set */
    public static boolean noDelay(int fd) {
        return getInt(fd, IPPROTO_TCP, posix_h.TCP_NODELAY(), "getsockopt(TCP_NODELAY)") != 0;
    }

    /**
     * Turns SO_KEEPALIVE on, with its timers: a value of 0 leaves that timer at the system's default.
     *
     * @param idleSeconds     silence before the first probe (TCP_KEEPIDLE)
     * @param intervalSeconds between probes (TCP_KEEPINTVL)
     * @param count           unanswered probes before the connection is dropped (TCP_KEEPCNT)
     * @throws PosixException for a value the kernel refuses (EINVAL)
     */
    public static void setKeepAlive(int fd, int idleSeconds, int intervalSeconds, int count) {
        setInt(fd, SOL_SOCKET, posix_h.SO_KEEPALIVE(), 1, "setsockopt(SO_KEEPALIVE)");
        if (idleSeconds > 0) {
            setInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPIDLE(), idleSeconds, "setsockopt(TCP_KEEPIDLE)");
        }
        if (intervalSeconds > 0) {
            setInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPINTVL(), intervalSeconds, "setsockopt(TCP_KEEPINTVL)");
        }
        if (count > 0) {
            setInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPCNT(), count, "setsockopt(TCP_KEEPCNT)");
        }
    }

    /** @return the value of an int socket option */
    static int getInt(int fd, int level, int option, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_INT);
            MemorySegment len = arena.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, (int) JAVA_INT.byteSize());
            MemorySegment state = Posix.callState();
            check((int) GETSOCKOPT.invokeExact(state, fd, level, option, value, len), state, what);
            return value.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t, what);
        }
    }

    /** @return the keepalive settings as the kernel holds them: SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT */
    public static int[] keepAlive(int fd) {
        return new int[] {getInt(fd, SOL_SOCKET, posix_h.SO_KEEPALIVE(), "getsockopt(SO_KEEPALIVE)"),
                getInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPIDLE(), "getsockopt(TCP_KEEPIDLE)"),
                getInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPINTVL(), "getsockopt(TCP_KEEPINTVL)"),
                getInt(fd, IPPROTO_TCP, posix_h.TCP_KEEPCNT(), "getsockopt(TCP_KEEPCNT)")};
    }

    private static void setInt(int fd, int level, int option, int value, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            v.set(JAVA_INT, 0, value);
            MemorySegment state = Posix.callState();
            check((int) SETSOCKOPT.invokeExact(state, fd, level, option, v, (int) JAVA_INT.byteSize()), state, what);
        } catch (Throwable t) {
            throw rethrow(t, what);
        }
    }

    /** @return the address the socket is bound to ({@code getsockname}) */
    public static InetSocketAddress localAddress(int fd) {
        return name(fd, true);
    }

    /**
     * @return the address of the socket's peer ({@code getpeername})
     * @throws PosixException ENOTCONN when it is not connected
     */
    public static InetSocketAddress remoteAddress(int fd) {
        return name(fd, false);
    }

    private static InetSocketAddress name(int fd, boolean local) {
        String what = local ? "getsockname" : "getpeername";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(sockaddr_storage.layout());
            MemorySegment len = arena.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, (int) addr.byteSize());
            MemorySegment state = Posix.callState();
            int rc = local ? (int) GETSOCKNAME.invokeExact(state, fd, addr, len)
                    : (int) GETPEERNAME.invokeExact(state, fd, addr, len);
            check(rc, state, what);
            return address(addr);
        } catch (Throwable t) {
            throw rethrow(t, what);
        }
    }

    /** The address in a {@code struct sockaddr_in} or {@code sockaddr_in6}. */
    private static InetSocketAddress address(MemorySegment addr) throws UnknownHostException {
        int family = sockaddr_storage.ss_family(addr) & 0xffff;
        if (family == AF_INET) {
            byte[] ip = sockaddr_in.sin_addr(addr).toArray(ValueLayout.JAVA_BYTE);
            int port = addr.get(PORT, sockaddr_in.sin_port$offset()) & 0xffff;
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        }
        if (family == AF_INET6) {
            byte[] ip = sockaddr_in6.sin6_addr(addr).toArray(ValueLayout.JAVA_BYTE);
            int port = addr.get(PORT, sockaddr_in6.sin6_port$offset()) & 0xffff;
            int scope = sockaddr_in6.sin6_scope_id(addr);
            InetAddress a = scope != 0 ? Inet6Address.getByAddress(null, ip, scope) : InetAddress.getByAddress(ip);
            return new InetSocketAddress(a, port);
        }
        throw new IllegalStateException("not an IP socket address: family " + family);
    }

    /** {@code address} as a {@code struct sockaddr_in} or {@code sockaddr_in6} in {@code arena}. */
    private static MemorySegment sockaddr(Arena arena, InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            MemorySegment s = arena.allocate(sockaddr_in.layout());
            sockaddr_in.sin_family(s, (short) AF_INET);
            s.set(PORT, sockaddr_in.sin_port$offset(), (short) address.getPort());
            MemorySegment.copy(MemorySegment.ofArray(ip.getAddress()), 0, sockaddr_in.sin_addr(s), 0, 4);
            return s;
        }
        Inet6Address ip6 = (Inet6Address) ip;
        MemorySegment s = arena.allocate(sockaddr_in6.layout());
        sockaddr_in6.sin6_family(s, (short) AF_INET6);
        s.set(PORT, sockaddr_in6.sin6_port$offset(), (short) address.getPort());
        MemorySegment.copy(MemorySegment.ofArray(ip6.getAddress()), 0, sockaddr_in6.sin6_addr(s), 0, 16);
        sockaddr_in6.sin6_scope_id(s, ip6.getScopeId());
        return s;
    }

    // ---------------------------------------------------------------- data

    /**
     * Writes up to {@code length} bytes of {@code buffer} from {@code offset}.
     *
     * @return the bytes written (fewer than asked when the send buffer filled), 0 when it is full
     * @throws PosixException when the connection failed (EPIPE, ECONNRESET)
     */
    public static long send(int fd, MemorySegment buffer, long offset, long length) {
        MemorySegment from = buffer.asSlice(offset, length);
        long n = posix_h.send(fd, from, length, MSG_NOSIGNAL);
        if (n >= 0) {
            return n;
        }
        MemorySegment state = Posix.callState();
        try {
            n = (long) SEND.invokeExact(state, fd, from, length, MSG_NOSIGNAL);
        } catch (Throwable t) {
            throw new AssertionError("send", t);
        }
        if (n >= 0) {
            return n;
        }
        int errno = Posix.errno(state);
        if (errno == Posix.EAGAIN || errno == Posix.EINTR) {
            return 0;
        }
        throw new PosixException("send", errno);
    }

    /**
     * Reads up to {@code length} bytes into {@code buffer} at {@code offset}.
     *
     * @return the bytes read, 0 when there is nothing to read now, -1 at the end of the stream
     * @throws PosixException when the connection failed (ECONNRESET)
     */
    public static long receive(int fd, MemorySegment buffer, long offset, long length) {
        if (length == 0) {
            return 0;
        }
        MemorySegment into = buffer.asSlice(offset, length);
        long n = posix_h.recv(fd, into, length, 0);
        if (n != -1) {
            return n == 0 ? -1 : n;
        }
        MemorySegment state = Posix.callState();
        try {
            n = (long) RECV.invokeExact(state, fd, into, length, 0);
        } catch (Throwable t) {
            throw new AssertionError("recv", t);
        }
        if (n >= 0) {
            return n == 0 ? -1 : n;
        }
        int errno = Posix.errno(state);
        if (errno == Posix.EAGAIN || errno == Posix.EINTR) {
            return 0;
        }
        throw new PosixException("recv", errno);
    }

    /**
     * Shuts down the socket's output ({@code shutdown(SHUT_WR)}): the peer reads the end of the
     * stream once it has read what was sent; this side may still read.
     *
     * @throws PosixException when the socket is not connected (ENOTCONN)
     */
    public static void shutdownOutput(int fd) {
        MemorySegment state = Posix.callState();
        try {
            check((int) SHUTDOWN.invokeExact(state, fd, posix_h.SHUT_WR()), state, "shutdown(SHUT_WR)");
        } catch (Throwable t) {
            throw rethrow(t, "shutdown");
        }
    }

    private static void check(int rc, MemorySegment state, String what) {
        if (rc < 0) {
            throw new PosixException(what, Posix.errno(state));
        }
    }

    private static RuntimeException rethrow(Throwable t, String what) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError(what, t);
    }
}
