package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.PosixException;
import dev.rdmarpc.posix.Sockets;
import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.loop.PolledSocket;
import dev.rdmarpc.rpc.transport.loop.SocketPoller;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A listening TCP socket in one {@code poll(2)} loop's {@link SocketPoller}; the connections it
 * accepts go to the thread {@code next} names each time, each on that thread's poller.
 *
 * <p>Created and closed by its transport; {@link #close} is idempotent and may be called from any thread.
 */
public final class PolledListener implements ServerEndpoint {
    private static final System.Logger LOG = System.getLogger(PolledListener.class.getName());

    /** A thread that can own polled connections: its connections and its poller. */
    public record SocketLoop(SocketGroup group, SocketPoller poller) {
    }

    private final SocketLoop home;
    private final Supplier<SocketLoop> next;
    private final int fd;
    private final InetSocketAddress address;
    private final Acceptance acceptance;
    private SocketPoller.Key key;
    private volatile boolean closed;
    private final AtomicBoolean fdClosed = new AtomicBoolean();

    private PolledListener(SocketLoop home, Supplier<SocketLoop> next, int fd, InetSocketAddress address, Acceptance acceptance) {
        this.home = home;
        this.next = next;
        this.fd = fd;
        this.address = address;
        this.acceptance = acceptance;
    }

    /**
     * Binds {@code address} and starts accepting on {@code home}'s thread.
     *
     * @param counts the transport's accepted connections, counted against its limits
     * @throws IOException when the address cannot be bound ({@link BindException} when taken)
     */
    public static PolledListener open(InetSocketAddress address, SocketLoop home, Supplier<SocketLoop> next, ConnectionCounts counts,
                                      int maxFrameLength, Acceptor acceptor) throws IOException {
        int fd;
        InetSocketAddress bound;
        try {
            fd = Sockets.listen(address, 1024);
        } catch (PosixException e) {
            IOException failure = PolledSocket.failure("listen on " + address, e);
            throw e.errno() == Sockets.EADDRINUSE ? (IOException) new BindException(failure.getMessage()).initCause(e) : failure;
        }
        try {
            bound = Sockets.localAddress(fd);
        } catch (PosixException e) {
            Posix.close(fd);
            throw PolledSocket.failure("getsockname", e);
        }
        PolledListener l = new PolledListener(home, next, fd, bound, new Acceptance(counts, bound, maxFrameLength, acceptor));
        try {
            home.group().runAndWait(() -> l.key = home.poller().register(fd, Posix.POLLIN, (k, revents) -> l.onAcceptable()),
                    java.time.Duration.ofSeconds(5));
        } catch (IOException | RuntimeException e) {
            Posix.close(fd);
            throw e;
        }
        return l;
    }

    private void onAcceptable() {
        for (int i = 0; i < 64 && !closed; i++) {
            int conn;
            try {
                conn = Sockets.accept(fd);
            } catch (PosixException e) {
                LOG.log(System.Logger.Level.WARNING, "accept on " + address + " failed: " + Posix.strerror(e.errno()));
                return;
            }
            if (conn < 0) {
                return;
            }
            PolledSocket s;
            try {
                s = PolledSocket.accepted(conn);
            } catch (IOException e) {
                continue; // gone already; accepted() closed it
            }
            ConnectionCounts.Admission admission = acceptance.admit(s.remoteAddress().getAddress());
            if (admission == null) {
                s.close();
                continue;
            }
            try {
                PolledStreamSocket.configure(s);
                SocketLoop target = next.get();
                acceptance.start(target.group(), new PolledStreamSocket(s, target.poller()), admission);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "could not configure accepted connection " + s, e);
                admission.release();
                s.close();
            }
        }
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        home.group().runOr(() -> {
            if (key != null) {
                home.poller().cancel(key);
            }
            closeDescriptor();
        }, this::closeDescriptor); // the loop is gone: nothing polls the descriptor any more
    }

    private void closeDescriptor() {
        if (fdClosed.compareAndSet(false, true)) {
            Posix.close(fd);
        }
    }

    @Override
    public String toString() {
        return "PolledListener[" + address + (closed ? ", closed" : "") + "]";
    }
}
