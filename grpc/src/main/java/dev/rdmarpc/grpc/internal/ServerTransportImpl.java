package dev.rdmarpc.grpc.internal;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.AsyncServerStream;
import dev.rdmarpc.rpc.StreamListener;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerTransport;
import io.grpc.internal.ServerTransportListener;
import io.grpc.internal.StatsTraceContext;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's connections, all of them, as one gRPC server transport: the rdmarpc server accepts
 * connections itself, and each gRPC call arrives as a stream of {@link Wire#METHOD_NAME}. Shutting
 * down refuses new calls ({@code UNAVAILABLE}, which a client may retry elsewhere) and lets calls in
 * flight end; {@link #shutdownNow} cancels them.
 */
final class ServerTransportImpl implements ServerTransport {
    private final List<? extends ServerStreamTracer.Factory> tracers;
    private final ScheduledExecutorService timer;
    private final int maxInbound;
    private final boolean secure;
    private final InternalLogId logId = InternalLogId.allocate(getClass(), null);
    private final AtomicInteger active = new AtomicInteger();
    private final OpenCalls<ServerStreamImpl> streams = new OpenCalls<>();
    /** The last response headers gRPC wrote, as blocks. */
    final MetadataCache<Wire.Out> headersOut = new MetadataCache<>();
    /** The last request headers, as gRPC's. */
    private final MetadataCache<Headers.Request> requests = new MetadataCache<>();
    /** The attributes of the last calls' connections, by the connection's peer (the same object for all its calls). */
    private final ConnectionAttributes[] attributes = new ConnectionAttributes[16];
    private volatile ServerTransportListener listener;
    private volatile RpcServer server;
    private volatile boolean shutdown;
    private boolean terminated;

    ServerTransportImpl(List<? extends ServerStreamTracer.Factory> tracers, ScheduledExecutorService timer, int maxInbound,
                        boolean secure) {
        this.tracers = tracers;
        this.timer = timer;
        this.maxInbound = maxInbound;
        this.secure = secure;
    }

    void started(ServerTransportListener listener, RpcServer server) {
        this.server = server;
        this.listener = listener;
    }

    /** New calls are answered SHUTTING_DOWN (gRPC's UNAVAILABLE); calls in flight go on. */
    void refuseNewCalls() {
        shutdown = true;
    }

    /**
     * The rdmarpc stream handler of one gRPC call, on the I/O thread: hands the call to gRPC and
     * returns the listener of its stream. Nothing here waits.
     */
    StreamListener<Object> open(AsyncServerStream<Object, Object> s) {
        ServerTransportListener l = listener;
        if (shutdown || l == null) {
            throw new RpcException(dev.rdmarpc.rpc.Status.SHUTTING_DOWN, l == null ? "the gRPC server is starting"
                    : "the gRPC server is shutting down");
        }
        dev.rdmarpc.rpc.Metadata md = s.requestMetadata();
        Headers.Request request = Headers.request(md, requests);
        if (request == null) {
            throw new RpcException(dev.rdmarpc.rpc.Status.PROTOCOL_ERROR, "a gRPC call without its method (" + Headers.PATH + ")");
        }
        Metadata headers = Headers.own(request.headers());
        long left = s.remainingNanos();
        if (left != Long.MAX_VALUE) {
            headers.discardAll(GrpcUtil.TIMEOUT_KEY);
            headers.put(GrpcUtil.TIMEOUT_KEY, Math.max(left, 1));
        }
        String method = request.method();
        StatsTraceContext stats = StatsTraceContext.newServerContext(tracers, method, headers);
        Attributes attrs = attributes(s.peer());
        active.incrementAndGet();
        ServerStreamImpl stream = new ServerStreamImpl(s, stats, attrs, request.authority(), maxInbound, this);
        streams.add(stream);
        StreamListener<Object> sl = stream.listener();
        try {
            l.streamCreated(stream, method, headers);
        } catch (RuntimeException e) {
            ended(stream);
            throw e;
        }
        return sl;
    }

    /** A connection's peer and the attributes of its calls. */
    private record ConnectionAttributes(InetSocketAddress peer, Attributes attributes) {
    }

    /** @return the attributes of a call from {@code peer}: made once per connection while its slot keeps it */
    private Attributes attributes(InetSocketAddress peer) {
        int slot = System.identityHashCode(peer) & (attributes.length - 1);
        ConnectionAttributes c = attributes[slot]; // immutable: shared without a lock; a lost race makes them again
        if (c == null || c.peer() != peer) {
            c = new ConnectionAttributes(peer, Attributes.newBuilder()
                    .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, peer)
                    .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, server.address())
                    .set(GrpcAttributes.ATTR_SECURITY_LEVEL, secure ? SecurityLevel.PRIVACY_AND_INTEGRITY : SecurityLevel.NONE)
                    .build());
            attributes[slot] = c;
        }
        return c.attributes();
    }

    /** A call ended (told to gRPC). */
    void ended(ServerStreamImpl stream) {
        if (streams.remove(stream) && active.decrementAndGet() == 0 && shutdown) {
            terminate();
        }
    }

    @Override
    public void shutdown() {
        shutdown = true;
        if (active.get() == 0) {
            terminate();
        }
    }

    @Override
    public void shutdownNow(Status reason) {
        shutdown = true;
        for (ServerStreamImpl s : streams.snapshot()) {
            s.stopNow();
        }
        terminate();
    }

    private void terminate() {
        synchronized (this) {
            if (terminated) {
                return;
            }
            terminated = true;
        }
        RpcServer s = server;
        ServerTransportListener l = listener;
        Thread.ofVirtual().name("rdmarpc-grpc-close").start(() -> {
            if (s != null) {
                s.shutdown(Duration.ofSeconds(1));
            }
            if (l != null) {
                l.transportTerminated();
            }
        });
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return timer;
    }

    @Override
    public InternalLogId getLogId() {
        return logId;
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        SettableFuture<SocketStats> f = SettableFuture.create();
        f.set(null);
        return f;
    }
}
