package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/** A listening socket registered with one event loop; accepted connections go round-robin to all loops. */
final class TcpListener implements ServerEndpoint {
    private static final System.Logger LOG = System.getLogger(TcpListener.class.getName());

    private final TcpTransport transport;
    private final TcpLoop loop;
    private final ServerSocketChannel channel;
    private final InetSocketAddress address;
    private final int maxFrameLength;
    private final Acceptor acceptor;
    private SelectionKey key;
    private volatile boolean closed;
    /** Refusals for a connection limit, logged sparsely. */
    private final SparseLog refusals = new SparseLog();

    TcpListener(TcpTransport transport, TcpLoop loop, ServerSocketChannel channel, int maxFrameLength,
                Acceptor acceptor) throws IOException {
        this.transport = transport;
        this.loop = loop;
        this.channel = channel;
        this.address = (InetSocketAddress) channel.getLocalAddress();
        this.maxFrameLength = maxFrameLength;
        this.acceptor = acceptor;
    }

    void register() throws IOException {
        key = channel.register(loop.selector(), SelectionKey.OP_ACCEPT, this);
    }

    void onAcceptable() {
        for (int i = 0; i < 64 && !closed; i++) {
            SocketChannel ch;
            try {
                ch = channel.accept();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "accept on " + address + " failed", e);
                return;
            }
            if (ch == null) {
                return;
            }
            ConnectionCounts.Admission admission = admit(ch);
            if (admission == null) {
                closeQuietly(ch);
                continue;
            }
            TcpLoop target = transport.nextLoop();
            try {
                transport.configure(ch);
                TcpConnection c = new TcpConnection(target, ch, maxFrameLength, transport.settings().writeHighWaterMark(), true);
                c.admitted(admission);
                target.execute(() -> {
                    try {
                        FrameHandler h = acceptor.accept(c);
                        c.register(h);
                        if (admission.refusal() != null) {
                            c.refuseQuietly(new ResourceExhaustedException(admission.refusal()));
                        }
                    } catch (IOException | RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "could not set up accepted connection " + c, e);
                        c.closeNow(e);
                    }
                });
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "could not configure accepted connection", e);
                admission.release();
                closeQuietly(ch);
            }
        }
    }

    /**
     * Counts {@code ch} against the transport's limits. Over a limit it is still set up, to be told
     * why ({@link TcpConnection#refuseQuietly}); logged at WARNING at most every
     * {@link SparseLog#INTERVAL_NANOS}, with how many were refused meanwhile.
     *
     * @return its admission, or null when it must be closed without a word (too many refused
     *         connections are still being told why, or its address is unknown)
     */
    private ConnectionCounts.Admission admit(SocketChannel ch) {
        InetAddress from;
        try {
            from = ((InetSocketAddress) ch.getRemoteAddress()).getAddress();
        } catch (IOException | RuntimeException e) {
            return null; // closed already
        }
        ConnectionCounts counts = transport.accepted();
        ConnectionCounts.Admission admission = counts.admit(from);
        if (admission.refusal() == null) {
            return admission;
        }
        long refused = refusals.occurred();
        if (refused > 0) {
            LOG.log(System.Logger.Level.WARNING, "refusing connections on " + address + ": " + admission.refusal()
                    + " (" + refused + " refused since the last such message)");
        }
        if (counts.tooManyRefusing()) {
            admission.release();
            return null;
        }
        return admission;
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing more to do
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
        Runnable r = () -> {
            if (key != null) {
                key.cancel();
            }
            try {
                channel.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing listener failed", e);
            }
        };
        if (loop.inLoop()) {
            r.run();
        } else {
            java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
            loop.execute(() -> {
                r.run();
                done.complete(null);
            });
            try {
                done.get(5, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                r.run(); // the loop is gone: close from here
            }
        }
        transport.removed(this);
    }
}
