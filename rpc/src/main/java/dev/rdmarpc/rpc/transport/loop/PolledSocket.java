package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.PosixException;
import dev.rdmarpc.posix.Sockets;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.GatheringByteChannel;

/**
 * A non-blocking TCP connection as a plain file descriptor ({@link Sockets}), for a loop thread that
 * waits with {@code poll(2)} on descriptors of its own (an RDMA loop's completion channels and
 * eventfd), which a {@code Selector} can neither join nor hand its sockets to. Its readiness comes
 * from a {@link SocketPoller}. It reads and writes as a non-blocking {@code SocketChannel} does (0
 * when nothing can move now, -1 at the end of the stream), with direct buffers only, so that the
 * same byte-level code (plain or TLS) runs over either.
 *
 * <p>Ownership: whoever made it ({@link #connect}, {@link #accepted}) closes it, once
 * ({@link #close}; later calls do nothing). One thread uses it.
 */
public final class PolledSocket implements ByteChannel, GatheringByteChannel {
    private final int fd;
    private final InetSocketAddress remote;
    private boolean connected;
    private boolean closed;

    private PolledSocket(int fd, InetSocketAddress remote, boolean connected) {
        this.fd = fd;
        this.remote = remote;
        this.connected = connected;
    }

    /**
     * Starts connecting to {@code address}: wait for {@link Sockets#POLLOUT}, then
     * {@link #finishConnect}.
     *
     * @throws IOException when connecting fails at once ({@link ConnectException} when refused)
     */
    public static PolledSocket connect(InetSocketAddress address) throws IOException {
        try {
            return new PolledSocket(Sockets.connect(address), address, false);
        } catch (PosixException e) {
            throw failure("connect to " + address, e);
        }
    }

    /**
     * A connection {@link Sockets#accept} returned; this takes ownership of {@code fd}.
     *
     * @throws IOException when the peer is gone already (its address cannot be read): {@code fd} is closed
     */
    public static PolledSocket accepted(int fd) throws IOException {
        try {
            return new PolledSocket(fd, Sockets.remoteAddress(fd), true);
        } catch (PosixException e) {
            Posix.close(fd);
            throw failure("accept", e);
        }
    }

    /** @return the descriptor, for {@link SocketPoller#register} */
    public int fd() {
        return fd;
    }

    /**
     * @return true when the connect {@link #connect} started has finished, false while it goes on
     * @throws IOException when it failed ({@link ConnectException} when refused)
     */
    public boolean finishConnect() throws IOException {
        if (connected) {
            return true;
        }
        ensureOpen();
        try {
            connected = Sockets.finishConnect(fd);
            return connected;
        } catch (PosixException e) {
            throw failure("connect to " + remote, e);
        }
    }

    /** @return whether the connection is established */
    public boolean isConnected() {
        return connected;
    }

    /** @return the peer's address (for a connecting socket, the one it connects to) */
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    /** @return the local address of the socket */
    public InetSocketAddress localAddress() throws IOException {
        ensureOpen();
        try {
            return Sockets.localAddress(fd);
        } catch (PosixException e) {
            throw failure("getsockname", e);
        }
    }

    /** Sets TCP_NODELAY and SO_KEEPALIVE with its timers in seconds (0: the system's). */
    public void configure(boolean noDelay, int keepIdle, int keepInterval, int keepCount) throws IOException {
        ensureOpen();
        try {
            Sockets.setNoDelay(fd, noDelay);
            Sockets.setKeepAlive(fd, keepIdle, keepInterval, keepCount);
        } catch (PosixException e) {
            throw failure("setsockopt", e);
        }
    }

    /** @return bytes read into {@code dst} (direct), 0 for none now, -1 at the end of the stream */
    @Override
    public int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        if (!dst.hasRemaining()) {
            return 0;
        }
        long n;
        try {
            n = Sockets.receive(fd, segment(dst), 0, dst.remaining());
        } catch (PosixException e) {
            throw failure("read", e);
        }
        if (n > 0) {
            dst.position(dst.position() + (int) n);
        }
        return (int) n;
    }

    /** @return bytes of {@code src} (direct) written, 0 when the socket takes none now */
    @Override
    public int write(ByteBuffer src) throws IOException {
        ensureOpen();
        if (!src.hasRemaining()) {
            return 0;
        }
        long n;
        try {
            n = Sockets.send(fd, segment(src), 0, src.remaining());
        } catch (PosixException e) {
            throw failure("write", e);
        }
        src.position(src.position() + (int) n);
        return (int) n;
    }

    /** Writes the buffers in order until one is not taken whole. @return bytes written */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long total = 0;
        for (int i = offset; i < offset + length; i++) {
            int want = srcs[i].remaining();
            int n = write(srcs[i]);
            total += n;
            if (n < want) {
                break;
            }
        }
        return total;
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    /** Sends the end of the stream (the peer reads -1 once it read the rest); reading goes on. */
    public void shutdownOutput() throws IOException {
        ensureOpen();
        try {
            Sockets.shutdownOutput(fd);
        } catch (PosixException e) {
            throw failure("shutdown", e);
        }
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    /** Closes the descriptor; later calls do nothing. The caller cancels its {@link SocketPoller} registration first. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Posix.close(fd);
        }
    }

    @Override
    public String toString() {
        return "PolledSocket[fd=" + fd + ", " + remote + (closed ? ", closed" : connected ? "" : ", connecting") + "]";
    }

    private void ensureOpen() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    private static MemorySegment segment(ByteBuffer b) {
        if (!b.isDirect()) {
            throw new IllegalArgumentException("a PolledSocket reads and writes direct buffers only");
        }
        return MemorySegment.ofBuffer(b);
    }

    /** The failure as the JDK's sockets report it: refused and reset connections by their own types. */
    public static IOException failure(String what, PosixException e) {
        int errno = e.errno();
        String msg = what + " failed: " + Posix.strerror(errno);
        if (errno == Sockets.ECONNREFUSED) {
            return (IOException) new ConnectException(msg).initCause(e);
        }
        if (errno == Sockets.ECONNRESET || errno == Sockets.EPIPE) {
            return (IOException) new SocketException(msg).initCause(e);
        }
        return new IOException(msg, e);
    }
}
