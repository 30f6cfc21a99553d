package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The TCP connections one I/O thread owns, whatever it waits with (the TCP transport's selector, the
 * RDMA loop's {@code poll(2)}): what a {@link TcpConnection} needs of its thread (tasks, flushes,
 * ticks, the pool and settings), and what the thread's poller does for all of them (tick, close).
 *
 * <p>Loop thread only, but {@link #execute}, {@link #executeLater}, {@link #flushLater} and
 * {@link #runAndWait}.
 */
public final class SocketGroup {
    private final IoLoop io;
    private final BufferPool pool;
    private final SocketSettings settings;
    private final TlsFailures tlsFailures;
    private final List<TcpConnection> connections = new ArrayList<>();
    /** Where connections closing with a last word drop what their peers still send. */
    private final ByteBuffer discard = ByteBuffer.allocateDirect(4096);

    /**
     * @param io          the thread
     * @param pool        the receive and send buffers of its connections
     * @param settings    its connections' settings
     * @param tlsFailures where accepted connections whose TLS handshake failed are counted (one per transport)
     */
    public SocketGroup(IoLoop io, BufferPool pool, SocketSettings settings, TlsFailures tlsFailures) {
        this.io = io;
        this.pool = pool;
        this.settings = settings;
        this.tlsFailures = tlsFailures;
    }

    BufferPool pool() {
        return pool;
    }

    SocketSettings settings() {
        return settings;
    }

    TlsFailures tlsFailures() {
        return tlsFailures;
    }

    /** @return scratch space for bytes read only to be dropped; loop thread only */
    ByteBuffer discard() {
        return discard;
    }

    /** @return whether the caller is the thread */
    public boolean inLoop() {
        return io.inLoop();
    }

    long tickIntervalNanos() {
        return io.tickNanos();
    }

    /** Runs {@code task} on the thread (now, when called on it). */
    public void execute(Runnable task) {
        io.execute(task);
    }

    /** Queues {@code task} even when called on the thread (it runs after the current event). */
    void executeLater(Runnable task) {
        io.executeLater(task);
    }

    /** A connection committed frames: flush it at the end of this (or the next) iteration. */
    void flushLater(TcpConnection c) {
        io.flushLater(c);
    }

    void added(TcpConnection c) {
        connections.add(c);
    }

    void removed(TcpConnection c) {
        connections.remove(c);
    }

    /** @return the connections open on the thread */
    public int size() {
        return connections.size();
    }

    /** @return whether a connection's handler has calls in flight */
    public boolean hasCallsInFlight() {
        return IoLoop.Poller.any(connections, c -> c.callsInFlight() > 0);
    }

    /** @return whether a connection needs ticks at the full rate */
    public boolean hasTimedWork() {
        return IoLoop.Poller.any(connections, TcpConnection::hasTimedWork);
    }

    /** Ticks every connection (timeouts, pings, last words). */
    public void tick(long now) {
        for (int i = connections.size() - 1; i >= 0 && i < connections.size(); i--) {
            connections.get(i).tick(now);
        }
    }

    /** Closes every connection (orderly); the thread stops. */
    public void closeAll() {
        for (TcpConnection c : new ArrayList<>(connections)) {
            c.closeNow(null);
        }
    }

    /**
     * Runs {@code task} on the thread (at once when called on it) and waits up to 5 s for it; when it
     * did not run by then (the thread is gone), runs {@code otherwise} here. For closing a listener.
     */
    public void runOr(Runnable task, Runnable otherwise) {
        if (inLoop()) {
            task.run();
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        execute(() -> {
            task.run();
            done.complete(null);
        });
        try {
            done.get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            otherwise.run();
        } catch (ExecutionException | TimeoutException e) {
            otherwise.run();
        }
    }

    /** Work for {@link #runAndWait}. */
    public interface IoTask {
        void run() throws IOException;
    }

    /**
     * Runs {@code task} on the thread and waits up to {@code timeout} for it (registering a socket):
     * its exception is thrown here.
     */
    public void runAndWait(IoTask task, Duration timeout) throws IOException {
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
}
