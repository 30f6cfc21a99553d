package dev.rdmarpc.rpc.transport.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One NIO selector thread. It owns its selector, its connections and their read buffers; other
 * threads talk to it through {@link #execute} (rare: registration, close) and {@link #flushLater}
 * (a frame committed off the loop). Writes committed on the loop are flushed once per iteration.
 */
final class EventLoop implements Runnable {
    private static final System.Logger LOG = System.getLogger(EventLoop.class.getName());

    private final TcpTransport transport;
    private final Selector selector;
    private final Thread thread;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final long tickIntervalNanos;
    private final long spinNanos;
    /** True while the loop is awake (or a wakeup is already pending): producers need not wake it. */
    private final AtomicBoolean awake = new AtomicBoolean(true);
    private final Consumer<SelectionKey> onSelected = this::processKey;

    // Cross-thread flush requests (guarded by remoteLock); swapped with remoteDrain by the loop.
    private final Object remoteLock = new Object();
    private TcpConnection[] remoteFlush = new TcpConnection[16];
    private int remoteCount;
    private volatile boolean remotePending;
    private TcpConnection[] remoteDrain = new TcpConnection[16];

    // Loop-thread state.
    private TcpConnection[] localFlush = new TcpConnection[16];
    private int localCount;
    private final List<TcpConnection> connections = new ArrayList<>();
    private long nextTick;
    private volatile boolean running = true;

    EventLoop(TcpTransport transport, String name, long tickIntervalNanos, long spinNanos) throws IOException {
        this.transport = transport;
        this.selector = Selector.open();
        this.tickIntervalNanos = tickIntervalNanos;
        this.spinNanos = spinNanos;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(false);
    }

    void start() {
        thread.start();
    }

    Selector selector() {
        return selector;
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    long tickIntervalNanos() {
        return tickIntervalNanos;
    }

    TcpTransport transport() {
        return transport;
    }

    /** Runs {@code task} on the loop (now, when called on it). */
    void execute(Runnable task) {
        if (inLoop()) {
            task.run();
            return;
        }
        tasks.add(task);
        wakeup();
    }

    /** Queues {@code task} for the loop even when called on it (runs after the current event). */
    void executeLater(Runnable task) {
        tasks.add(task);
        if (!inLoop()) {
            wakeup();
        }
    }

    private void wakeup() {
        if (awake.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    /** A connection committed frames; flush it at the end of this (or the next) iteration. */
    void flushLater(TcpConnection c) {
        if (inLoop()) {
            if (localCount == localFlush.length) {
                localFlush = Arrays.copyOf(localFlush, localCount * 2);
            }
            localFlush[localCount++] = c;
            return;
        }
        synchronized (remoteLock) {
            if (remoteCount == remoteFlush.length) {
                remoteFlush = Arrays.copyOf(remoteFlush, remoteCount * 2);
            }
            remoteFlush[remoteCount++] = c;
            remotePending = true;
        }
        wakeup();
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
        running = false;
        selector.wakeup();
    }

    void join(long millis) throws InterruptedException {
        if (!inLoop()) {
            thread.join(millis);
        }
    }

    @Override
    public void run() {
        nextTick = System.nanoTime() + tickIntervalNanos;
        try {
            while (running) {
                try {
                    iterate();
                } catch (Throwable t) {
                    // One bad event must not stop the loop serving every other connection.
                    LOG.log(System.Logger.Level.ERROR, "event loop " + thread.getName() + " caught an unexpected error", t);
                }
            }
        } finally {
            closeAll();
        }
    }

    private void iterate() throws IOException {
        awake.set(false);
        if (!tasks.isEmpty() || remotePending || localCount > 0) {
            awake.set(true);
            selector.selectNow(onSelected);
        } else if (spinNanos <= 0 || !spinReady()) {
            long waitMillis = Math.max(1, (nextTick - System.nanoTime()) / 1_000_000);
            selector.select(onSelected, waitMillis);
            awake.set(true);
        }
        runTasks();
        flushAll();
        long now = System.nanoTime();
        if (now - nextTick >= 0) {
            nextTick = now + tickIntervalNanos;
            for (int i = connections.size() - 1; i >= 0 && i < connections.size(); i--) {
                connections.get(i).tick(now);
            }
            flushAll();
            transport.bufferPool().trim(now);
        }
    }

    /**
     * Polls without sleeping for up to the idle-spin time: on machines where waking a sleeping thread
     * costs tens of microseconds (VMs), the next batch usually arrives within that window.
     *
     * @return true when events were processed (or work arrived) while spinning
     */
    private boolean spinReady() throws IOException {
        long deadline = System.nanoTime() + spinNanos;
        do {
            if (selector.selectNow(onSelected) > 0 || !tasks.isEmpty() || remotePending) {
                awake.set(true);
                return true;
            }
            // Yield rather than spin: a peer sharing this core (client and server in one process on a
            // small machine) gets to run and produce the very event this loop waits for.
            Thread.yield();
        } while (System.nanoTime() - deadline < 0);
        return false;
    }

    private void runTasks() {
        Runnable r;
        int budget = 1024;
        while (budget-- > 0 && (r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "event loop task failed", t);
            }
        }
    }

    private void flushAll() {
        if (remotePending) {
            int n;
            TcpConnection[] drain;
            synchronized (remoteLock) {
                drain = remoteFlush;
                n = remoteCount;
                remoteFlush = remoteDrain;
                remoteCount = 0;
                remotePending = false;
            }
            remoteDrain = drain;
            for (int i = 0; i < n; i++) {
                drain[i].flush();
                drain[i] = null;
            }
        }
        // Flushing can run handlers' code paths that commit more (rare); loop until quiet.
        while (localCount > 0) {
            int n = localCount;
            localCount = 0;
            for (int i = 0; i < n; i++) {
                TcpConnection c = localFlush[i];
                localFlush[i] = null;
                c.flush();
            }
        }
    }

    private void processKey(SelectionKey key) {
        Object a = key.attachment();
        if (a instanceof TcpConnection c) {
            c.onReady(key);
        } else if (a instanceof TcpListener l) {
            l.onAcceptable();
        }
    }

    private void closeAll() {
        for (TcpConnection c : new ArrayList<>(connections)) {
            c.closeNow(null);
        }
        runTasks();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing selector failed", e);
        }
    }
}
