package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.loop.IoLoop;
import dev.rdmarpc.rpc.transport.stream.SocketGroup;
import dev.rdmarpc.rpc.transport.stream.TcpConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.Consumer;

/**
 * TCP's side of one {@link IoLoop}: a NIO selector, the listeners registered with it and its
 * connections ({@link SocketGroup}). Other threads reach it through {@link #execute} (rare:
 * registration, close).
 */
final class TcpLoop implements IoLoop.Poller {
    private static final System.Logger LOG = System.getLogger(TcpLoop.class.getName());

    private final TcpTransport transport;
    private final IoLoop io;
    private final Selector selector;
    private final Consumer<SelectionKey> onSelected = this::processKey;
    private final SocketGroup connections;

    /** @param cpu the CPU the thread pins itself to, -1 for none */
    TcpLoop(TcpTransport transport, String name, TcpConfig config, int cpu) throws IOException {
        this.transport = transport;
        this.selector = Selector.open();
        this.io = new IoLoop(name, config.loop(), transport.bufferPool());
        this.connections = new SocketGroup(io, transport.bufferPool(), transport.socketSettings(), transport.tlsFailures());
        io.pinTo(cpu);
    }

    void start() {
        io.start(this);
    }

    Selector selector() {
        return selector;
    }

    boolean inLoop() {
        return io.inLoop();
    }

    /** @return its connections, for a new one */
    SocketGroup connections() {
        return connections;
    }

    /** Runs {@code task} on the loop (now, when called on it). */
    void execute(Runnable task) {
        io.execute(task);
    }

    int connectionCount() {
        return connections.size();
    }

    void shutdown() {
        io.shutdown();
    }

    void join(long millis) throws InterruptedException {
        io.join(millis);
    }

    // ================================================================== IoLoop.Poller (loop thread)

    @Override
    public int pollNow() {
        try {
            return selector.selectNow(onSelected);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public int await(long timeoutMillis) {
        try {
            return selector.select(onSelected, timeoutMillis);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void wake() {
        selector.wakeup();
    }

    @Override
    public boolean hasCallsInFlight() {
        return connections.hasCallsInFlight();
    }

    @Override
    public boolean hasTimedWork() {
        return connections.hasTimedWork();
    }

    @Override
    public void tick(long now) {
        connections.tick(now);
    }

    private void processKey(SelectionKey key) {
        Object a = key.attachment();
        if (a instanceof TcpConnection c) {
            NioSocket.ready(key, c);
            // What the handlers answered goes out before the next connection is read, as a Netty
            // pipeline flushes on its read-complete: the peer gets to work on it meanwhile.
            io.flushCommitted();
        } else if (a instanceof TcpListener l) {
            l.onAcceptable();
        }
    }

    @Override
    public void close() {
        connections.closeAll();
        io.runTasks();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing selector failed", e);
        }
    }
}
