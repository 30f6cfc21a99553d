package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.Sockets;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.loop.PolledSocket;
import dev.rdmarpc.rpc.transport.loop.SocketPoller;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A connection's socket on a loop that waits with {@code poll(2)} (the RDMA loop): a
 * {@link PolledSocket} whose readiness a {@link SocketPoller} of the connection's thread reports.
 */
public final class PolledStreamSocket implements StreamSocket {
    private final PolledSocket socket;
    private final SocketPoller poller;
    private SocketPoller.Key key;

    /** @param poller the poller of the thread whose {@link SocketGroup} the connection joins */
    public PolledStreamSocket(PolledSocket socket, SocketPoller poller) {
        this.socket = socket;
        this.poller = poller;
    }

    /** Sets TCP_NODELAY and the default keepalive timers ({@link SocketSettings}). */
    static void configure(PolledSocket s) throws IOException {
        s.configure(true, SocketSettings.DEFAULT_KEEPALIVE_IDLE_SECONDS, SocketSettings.DEFAULT_KEEPALIVE_INTERVAL_SECONDS,
                SocketSettings.DEFAULT_KEEPALIVE_COUNT);
    }

    /**
     * Connects to {@code address} within {@code timeout} (waiting on the caller's thread), then makes
     * the socket a connection of {@code thread}, its frames going to {@code handler}; with TLS, returns
     * once the handshake is done.
     *
     * @return the connection, owned by the caller
     * @throws IOException when the connect, its timeout or the TLS handshake fails
     */
    public static TcpConnection connect(InetSocketAddress address, Duration timeout, SocketGroup group, SocketPoller poller,
                                        int maxFrameLength, FrameHandler handler) throws IOException {
        PolledSocket s = PolledSocket.connect(address);
        TcpConnection c;
        try {
            awaitConnected(s, timeout);
            configure(s);
            c = new TcpConnection(group, new PolledStreamSocket(s, poller), maxFrameLength, false);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        try {
            group.runAndWait(() -> c.register(handler), timeout.plusSeconds(1));
        } catch (IOException | RuntimeException e) {
            c.close(e);
            throw e;
        }
        if (group.settings().tls() != null) {
            TlsFailures.awaitHandshake(c, address, timeout);
        }
        return c;
    }

    private static void awaitConnected(PolledSocket s, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(Posix.POLLFD_BYTES);
            while (!s.finishConnect()) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("connect to " + s.remoteAddress() + " timed out after "
                            + timeout.toMillis() + " ms");
                }
                Posix.pollfd(fds, 0, s.fd(), Sockets.POLLOUT);
                Posix.poll(fds, 1, (int) Math.min(left, Integer.MAX_VALUE));
            }
        }
    }

    @Override
    public void register(TcpConnection connection) {
        key = poller.register(socket.fd(), Posix.POLLIN, (k, revents) -> ready(connection, k, revents));
    }

    private static void ready(TcpConnection c, SocketPoller.Key k, int revents) {
        boolean failed = (revents & (Posix.POLLERR | Posix.POLLHUP | Posix.POLLNVAL)) != 0;
        boolean writable = (revents & Sockets.POLLOUT) != 0 || failed && (k.interest() & Sockets.POLLOUT) != 0;
        // an error or the peer's close is read as such (-1 or an IOException), as a Selector reports it
        c.onReady(writable, (revents & Posix.POLLIN) != 0 || failed);
    }

    @Override
    public void interest(boolean read, boolean write) {
        key.interest((read ? Posix.POLLIN : 0) | (write ? Sockets.POLLOUT : 0));
    }

    @Override
    public boolean registered() {
        return key != null && !key.isCancelled();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return socket.remoteAddress();
    }

    @Override
    public InetSocketAddress localAddress() {
        try {
            return socket.localAddress();
        } catch (IOException e) {
            return new InetSocketAddress(0); // closed already: the connection is about to learn it
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return socket.read(dst);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return socket.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return socket.write(srcs, offset, length);
    }

    @Override
    public long write(ByteBuffer[] srcs) throws IOException {
        return socket.write(srcs);
    }

    @Override
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    @Override
    public boolean isOpen() {
        return socket.isOpen();
    }

    @Override
    public void close() {
        if (key != null) {
            poller.cancel(key);
        }
        socket.close();
    }

    @Override
    public String toString() {
        return socket.toString();
    }
}
