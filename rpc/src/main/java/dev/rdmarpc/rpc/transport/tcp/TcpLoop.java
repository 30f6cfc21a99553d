package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * TCP's side of one {@link IoLoop}: a NIO selector and the connections and listeners registered
 * with it. Other threads reach it through {@link #execute} (rare: registration, close) and
 * {@link #flushLater} (a frame committed off the thread).
 */
final class TcpLoop implements IoLoop.Poller {
    private static final System.Logger LOG = System.getLogger(TcpLoop.class.getName());

    private final TcpTransport transport;
    private final IoLoop io;
    private final Selector selector;
    private final Consumer<SelectionKey> onSelected = this::processKey;
    private final List<TcpConnection> connections = new ArrayList<>();
    /** Where connections closing with a last word drop what their peers still send. */
    private final ByteBuffer discard = ByteBuffer.allocateDirect(4096);

    /** @param cpu the CPU the thread pins itself to, -1 for none */
    TcpLoop(TcpTransport transport, String name, TcpConfig config, int cpu) throws IOException {
        this.transport = transport;
        this.selector = Selector.open();
        this.io = new IoLoop(name, config.loop(), transport.bufferPool());
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

    long tickIntervalNanos() {
        return io.tickNanos();
    }

    TcpTransport transport() {
        return transport;
    }

    /** @return scratch space for bytes read only to be dropped; loop thread only */
    ByteBuffer discard() {
        return discard;
    }

    /** Runs {@code task} on the loop (now, when called on it). */
    void execute(Runnable task) {
        io.execute(task);
    }

    /** Queues {@code task} for the loop even when called on it (runs after the current event). */
    void executeLater(Runnable task) {
        io.executeLater(task);
    }

    /** A connection committed frames; flush it at the end of this (or the next) iteration. */
    void flushLater(TcpConnection c) {
        io.flushLater(c);
    }

    void added(TcpConnection c) {
        connections.add(c);
    }

    void removed(TcpConnection c) {
        connections.remove(c);
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

    /** Work for {@link #runAndWait}. */
    interface IoTask {
        void run() throws IOException;
    }

    /**
     * Runs {@code task} on the loop and waits up to {@code timeout} for it (registering a channel):
     * its exception is thrown here.
     */
    void runAndWait(IoTask task, Duration timeout) throws IOException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        try {
            done.get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while registering with the event loop");
        } catch (TimeoutException e) {
            throw new IOException("event loop did not register the channel in time", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(c);
        }
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
        return IoLoop.Poller.any(connections, c -> c.callsInFlight() > 0);
    }

    @Override
    public boolean hasTimedWork() {
        return IoLoop.Poller.any(connections, TcpConnection::hasTimedWork);
    }

    @Override
    public void tick(long now) {
        for (int i = connections.size() - 1; i >= 0 && i < connections.size(); i--) {
            connections.get(i).tick(now);
        }
    }

    private void processKey(SelectionKey key) {
        Object a = key.attachment();
        if (a instanceof TcpConnection c) {
            c.onReady(key);
            // What the handlers answered goes out before the next connection is read, as a Netty
            // pipeline flushes on its read-complete: the peer gets to work on it meanwhile.
            io.flushCommitted();
        } else if (a instanceof TcpListener l) {
            l.onAcceptable();
        }
    }

    @Override
    public void close() {
        for (TcpConnection c : new ArrayList<>(connections)) {
            c.closeNow(null);
        }
        io.runTasks();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing selector failed", e);
        }
    }
}
