package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.LoopSettings;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.frame.EndpointChecks;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import dev.rdmarpc.rpc.transport.stream.ConnectionCounts;
import dev.rdmarpc.rpc.transport.stream.SocketSettings;
import dev.rdmarpc.rpc.transport.stream.TcpConnection;
import dev.rdmarpc.rpc.transport.stream.TlsFailures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The TCP {@link Transport}: {@link LoopSettings#ioThreads} NIO event loops, each owning its connections.
 * Create one with {@link #create(TcpConfig)}; the creator closes it.
 */
public final class TcpTransport implements Transport {
    private static final System.Logger LOG = System.getLogger(TcpTransport.class.getName());

    private final TcpConfig config;
    private final BufferPool pool;
    private final TcpLoop[] loops;
    private final AtomicInteger next = new AtomicInteger();
    private final Set<TcpListener> listeners = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ConnectionCounts accepted;
    private final SocketSettings socketSettings;
    private final TlsFailures tlsFailures = new TlsFailures();

    private TcpTransport(TcpConfig config) {
        this.config = config;
        IoLoop.checkCpus(config.loop().ioThreadCpus(), "TcpConfig ioThreadCpus");
        this.accepted = new ConnectionCounts(config.limits(), config.bufferPool().maxLargeBytes());
        this.socketSettings = new SocketSettings(config.frameReadTimeout().toNanos(), config.idleTimeout().toNanos(),
                config.pingInterval().toNanos(), config.pingTimeout().toNanos(), config.loop().idleTickInterval().toNanos(),
                config.writeHighWaterMark(), config.tls());
        this.pool = BufferPool.create(config.bufferPool());
        this.loops = new TcpLoop[config.loop().ioThreads()];
        int started = 0;
        try {
            for (int i = 0; i < loops.length; i++) {
                loops[i] = new TcpLoop(this, config.threadNamePrefix() + "-" + i, config, config.loop().ioThreadCpu(i));
            }
            for (TcpLoop l : loops) {
                l.start();
                started++;
            }
        } catch (IOException e) {
            for (int i = 0; i < started; i++) {
                loops[i].shutdown();
            }
            pool.close();
            throw new UncheckedIOException("could not open a selector", e);
        }
    }

    /**
     * Creates a transport and starts its event loops (non-daemon threads).
     *
     * @param config settings, validated here
     * @return a started transport the caller owns
     */
    public static TcpTransport create(TcpConfig config) {
        return new TcpTransport(config.copy().conclude());
    }

    /** @return a transport with the default {@link TcpConfig} */
    public static TcpTransport create() {
        return create(new TcpConfig());
    }

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public BufferPool bufferPool() {
        return pool;
    }

    TcpLoop nextLoop() {
        return loops[Math.floorMod(next.getAndIncrement(), loops.length)];
    }

    void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        config.keepalive().apply(ch);
        if (config.socketSendBuffer() > 0) {
            ch.setOption(StandardSocketOptions.SO_SNDBUF, config.socketSendBuffer());
        } else if (config.loopbackSocketSendBuffer() > 0 && ch.getRemoteAddress() instanceof InetSocketAddress peer
                && peer.getAddress() != null && peer.getAddress().isLoopbackAddress()) {
            ch.setOption(StandardSocketOptions.SO_SNDBUF, config.loopbackSocketSendBuffer());
        }
        if (config.socketReceiveBuffer() > 0) {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, config.socketReceiveBuffer());
        }
    }

    /** @return the accepted connections, counted against {@link TcpConfig#limits()} */
    ConnectionCounts accepted() {
        return accepted;
    }

    /** @return accepted (server) connections open now that count against {@link TcpConfig#limits()} */
    public int acceptedConnections() {
        return accepted.total();
    }

    void removed(TcpListener l) {
        listeners.remove(l);
    }

    /** @return what its connections read from the settings */
    SocketSettings socketSettings() {
        return socketSettings;
    }

    /** @return where accepted connections whose TLS handshake failed are counted */
    TlsFailures tlsFailures() {
        return tlsFailures;
    }

    /** @return accepted connections that closed before their TLS handshake was done */
    public long tlsHandshakeFailures() {
        return tlsFailures.count();
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException("transport is closed");
        }
    }

    @Override
    public ServerEndpoint listen(InetSocketAddress address, int maxFrameLength, Acceptor acceptor) throws IOException {
        EndpointChecks.check(address, "acceptor", acceptor, maxFrameLength);
        ensureOpen();
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(address, 1024);
            ch.configureBlocking(false);
            TcpLoop loop = nextLoop();
            TcpListener l = new TcpListener(this, loop, ch, maxFrameLength, acceptor);
            loop.connections().runAndWait(l::register, Duration.ofSeconds(5));
            listeners.add(l);
            LOG.log(System.Logger.Level.DEBUG, "listening on {0}", l.address());
            return l;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    public Connection connect(InetSocketAddress address, int maxFrameLength, FrameHandler handler, Duration timeout)
            throws IOException {
        EndpointChecks.check(address, "handler", handler, maxFrameLength);
        ensureOpen();
        SocketChannel ch = SocketChannel.open();
        try {
            long millis = Math.max(1, timeout.toMillis());
            ch.socket().connect(address, (int) Math.min(Integer.MAX_VALUE, millis));
            configure(ch);
            TcpLoop loop = nextLoop();
            TcpConnection c = new TcpConnection(loop.connections(), new NioSocket(ch, loop.selector()), maxFrameLength, false);
            loop.connections().runAndWait(() -> c.register(handler), timeout.plusSeconds(1));
            if (config.tls() != null) {
                TlsFailures.awaitHandshake(c, address, timeout);
            }
            return c;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Closes every listener and connection, stops the event loops (waiting up to 5 s for them) and
     * closes the buffer pool. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (TcpListener l : listeners) {
            l.close();
        }
        for (TcpLoop l : loops) {
            l.shutdown();
        }
        boolean joined = true;
        for (TcpLoop l : loops) {
            try {
                l.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                joined = false;
            }
        }
        if (joined) {
            pool.close();
        } else {
            LOG.log(System.Logger.Level.WARNING, "TCP transport closed while interrupted; buffer pool left to the event loops");
        }
    }

    /** @return the (validated) settings */
    public TcpConfig config() {
        return config.copy();
    }

    /** @return the settings themselves, not a copy: read only */
    TcpConfig settings() {
        return config;
    }
}
