package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.ServerInterceptor;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of the RPC core: the method registry, the blocking-handler executor (a virtual
 * thread per call), the in-flight bound, and the set of open connections for a graceful drain.
 */
public final class ServerCore implements RpcProvider.Server {
    private static final System.Logger LOG = System.getLogger(ServerCore.class.getName());

    final MethodRegistry registry;
    final Counters metrics = new Counters();
    final int maxFrameLength;
    /** Most bytes of metadata a frame may carry, either way. */
    final int maxMetadataBytes;
    /** Run around every call, in this order (and the reverse after). */
    final ServerInterceptor[] interceptors;
    final int maxInFlight;
    final String transportName;
    final BufferPool pool;
    final AtomicInteger blockingInFlight = new AtomicInteger();
    final ExecutorService blockingExecutor;
    /** What each stream may have unread here: its receive window. */
    final int streamWindowBytes;
    private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
    volatile boolean shuttingDown;

    /**
     * @param registry       the methods (frozen here)
     * @param maxFrameLength largest frame accepted or sent
     * @param maxMetadataBytes most bytes of metadata a frame may carry, either way
     * @param interceptors   run around every call, in this order
     * @param maxInFlight    most blocking calls in flight
     * @param pool           the transport's buffer pool (copies for blocking handlers)
     * @param transportName  for events and logs
     * @param streamWindowBytes what each stream may have unread here
     */
    public ServerCore(MethodRegistry registry, int maxFrameLength, int maxMetadataBytes, List<ServerInterceptor> interceptors,
                      int maxInFlight, BufferPool pool, String transportName, int streamWindowBytes) {
        this.streamWindowBytes = streamWindowBytes;
        registry.freeze();
        this.registry = registry;
        this.maxFrameLength = maxFrameLength;
        this.maxMetadataBytes = maxMetadataBytes;
        this.interceptors = interceptors.toArray(new ServerInterceptor[0]);
        this.maxInFlight = maxInFlight;
        this.pool = pool;
        this.transportName = transportName;
        this.blockingExecutor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("rdmarpc-handler-", 0).factory());
    }

    @Override
    public FrameHandler accept(Connection connection) {
        ServerConnection sc = new ServerConnection(this, connection);
        connections.add(sc);
        metrics.connectionsOpened.increment();
        Events.opened(transportName, "server", connection.localAddress(), connection.remoteAddress());
        LOG.log(System.Logger.Level.DEBUG, "accepted {0}", connection.remoteAddress());
        return sc;
    }

    /**
     * Runs the interceptors' {@code beforeCall} in order, up to the first that refuses (none: nothing
     * runs, nothing is allocated).
     *
     * @return that refusal, or null when every one let the call through
     */
    Throwable beforeCall(CallContext call) {
        for (ServerInterceptor i : interceptors) {
            try {
                i.beforeCall(call);
            } catch (Throwable t) {
                return t;
            }
        }
        return null;
    }

    /** Runs every interceptor's {@code afterCall}, in reverse order; what they throw is logged. */
    void afterCall(CallContext call, Status status) {
        for (int i = interceptors.length - 1; i >= 0; i--) {
            try {
                interceptors[i].afterCall(call, status);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "server interceptor " + interceptors[i] + " threw in afterCall", e);
            }
        }
    }

    void removed(ServerConnection sc) {
        connections.remove(sc);
        metrics.connectionsClosed.increment();
    }

    /** @return the counters */
    @Override
    public Counters metrics() {
        return metrics;
    }

    /** From now on new requests are answered with SHUTTING_DOWN. */
    @Override
    public void beginShutdown() {
        shuttingDown = true;
    }

    /**
     * Waits until no blocking call is in flight and every response has been written.
     *
     * @param timeoutNanos how long to wait
     * @return true when drained in time
     */
    @Override
    public boolean awaitDrained(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            boolean drained = blockingInFlight.get() == 0;
            if (drained) {
                for (ServerConnection c : connections) {
                    if (c.connection.isOpen() && c.connection.pendingBytes() > 0) {
                        drained = false;
                        break;
                    }
                }
            }
            if (drained) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** Closes every connection (orderly) and stops the blocking executor. */
    @Override
    public void closeConnections() {
        for (ServerConnection c : connections) {
            c.connection.close(null);
        }
        blockingExecutor.shutdown();
        try {
            if (!blockingExecutor.awaitTermination(1, TimeUnit.SECONDS)) {
                blockingExecutor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            blockingExecutor.shutdownNow();
        }
    }

    /** @return open connections now */
    public int connectionCount() {
        return connections.size();
    }
}
