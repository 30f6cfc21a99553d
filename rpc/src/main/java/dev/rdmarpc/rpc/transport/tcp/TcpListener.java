package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.stream.Acceptance;
import dev.rdmarpc.rpc.transport.stream.ConnectionCounts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
    private final Acceptance acceptance;
    private SelectionKey key;
    private volatile boolean closed;

    TcpListener(TcpTransport transport, TcpLoop loop, ServerSocketChannel channel, int maxFrameLength,
                Acceptor acceptor) throws IOException {
        this.transport = transport;
        this.loop = loop;
        this.channel = channel;
        this.address = (InetSocketAddress) channel.getLocalAddress();
        this.acceptance = new Acceptance(transport.accepted(), address, maxFrameLength, acceptor);
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
                acceptance.start(target.connections(), new NioSocket(ch, target.selector()), admission);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "could not configure accepted connection", e);
                admission.release();
                closeQuietly(ch);
            }
        }
    }

    /** @return its admission ({@link Acceptance#admit}), or null when it must be closed without a word */
    private ConnectionCounts.Admission admit(SocketChannel ch) {
        InetAddress from;
        try {
            from = ((InetSocketAddress) ch.getRemoteAddress()).getAddress();
        } catch (IOException | RuntimeException e) {
            return null; // closed already
        }
        return acceptance.admit(from);
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
        loop.connections().runOr(r, r); // the loop is gone: close from here
        transport.removed(this);
    }
}
