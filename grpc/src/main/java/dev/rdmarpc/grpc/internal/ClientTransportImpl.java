package dev.rdmarpc.grpc.internal;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.rdmarpc.rpc.RpcClient;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.FailingClientStream;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.SimpleDisconnectError;
import io.grpc.internal.StatsTraceContext;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One rdmarpc connection ({@link RpcClient}) to one server address, as a gRPC client transport.
 * It connects on a virtual thread when started; each call is a stream on it. The connection's loss
 * (seen by a check every {@value #LIVENESS_CHECK_MILLIS} ms and by any call that fails with it)
 * shuts the transport down, so that gRPC's load balancer connects anew.
 */
final class ClientTransportImpl implements ConnectionClientTransport {
    static final long LIVENESS_CHECK_MILLIS = 100;

    private final InetSocketAddress address;
    private final Function<InetSocketAddress, RpcClient> connector;
    private final ScheduledExecutorService timer;
    private final boolean secure;
    private final int maxInbound;
    private final InternalLogId logId;
    private final OpenCalls<ClientStreamImpl> streams = new OpenCalls<>();
    /** The start of the last calls, by headers, method and authority. */
    final MetadataCache<dev.rdmarpc.rpc.CallOptions> startOptions = new MetadataCache<>();
    /** The servers' last response headers, by their block. */
    final MetadataCache<Headers.Received> headersIn = new MetadataCache<>();
    /** The servers' last trailers. */
    final MetadataCache<Headers.Trailers> trailersIn = new MetadataCache<>();
    private volatile Attributes attributes = Attributes.EMPTY;
    private Listener listener;
    private volatile RpcClient client;
    private ScheduledFuture<?> liveness;
    private Status shutdownStatus;
    private boolean terminated;

    ClientTransportImpl(InetSocketAddress address, Function<InetSocketAddress, RpcClient> connector,
                        ScheduledExecutorService timer, boolean secure, int maxInbound) {
        this.maxInbound = maxInbound;
        this.address = address;
        this.connector = connector;
        this.timer = timer;
        this.secure = secure;
        this.logId = InternalLogId.allocate(getClass(), address.toString());
    }

    @Override
    public Runnable start(Listener listener) {
        this.listener = listener;
        return () -> Thread.ofVirtual().name("rdmarpc-grpc-connect").start(this::connect);
    }

    private void connect() {
        RpcClient c;
        try {
            c = connector.apply(address);
        } catch (RuntimeException e) {
            Status s = Status.UNAVAILABLE.withDescription("rdmarpc could not connect to " + address + ": " + e.getMessage())
                    .withCause(e);
            synchronized (this) {
                shutdownStatus = s;
            }
            listener.transportShutdown(s, SimpleDisconnectError.CONNECTION_RESET);
            terminate();
            return;
        }
        synchronized (this) {
            client = c;
            attributes = Attributes.newBuilder()
                    .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, address)
                    .set(GrpcAttributes.ATTR_SECURITY_LEVEL, secure ? SecurityLevel.PRIVACY_AND_INTEGRITY : SecurityLevel.NONE)
                    .build();
            if (shutdownStatus != null) {
                c.close();
                return;
            }
            liveness = timer.scheduleWithFixedDelay(this::checkAlive, LIVENESS_CHECK_MILLIS, LIVENESS_CHECK_MILLIS,
                    TimeUnit.MILLISECONDS);
        }
        listener.transportReady();
    }

    private void checkAlive() {
        RpcClient c = client;
        if (c != null && !c.isOpen()) {
            connectionLost();
        }
    }

    /** The connection closed under the transport: every call on it fails, and gRPC connects anew. */
    void connectionLost() {
        Status s = Status.UNAVAILABLE.withDescription("the rdmarpc connection to " + address + " closed");
        shutdownNow(s);
    }

    RpcClient client() {
        RpcClient c = client;
        if (c == null) {
            throw new dev.rdmarpc.rpc.RpcException(dev.rdmarpc.rpc.Status.CONNECTION_CLOSED, "not connected");
        }
        return c;
    }

    /** @return whether the rdmarpc connection is up */
    boolean isOpen() {
        RpcClient c = client;
        return c != null && c.isOpen();
    }

    String address() {
        return address.toString();
    }

    @Override
    public ClientStream newStream(MethodDescriptor<?, ?> method, Metadata headers, CallOptions callOptions,
                                  ClientStreamTracer[] tracers) {
        Status s;
        synchronized (this) {
            s = shutdownStatus;
        }
        if (s != null) {
            return new FailingClientStream(s, RpcProgress.REFUSED, tracers);
        }
        StatsTraceContext stats = StatsTraceContext.newClientContext(tracers, attributes, headers);
        return new ClientStreamImpl(this, method, headers, callOptions, stats, maxInbound);
    }

    void streamStarted(ClientStreamImpl stream) {
        boolean first;
        synchronized (this) {
            first = streams.add(stream);
        }
        if (first) {
            listener.transportInUse(true);
        }
    }

    void streamEnded(ClientStreamImpl stream) {
        boolean last;
        boolean terminate;
        synchronized (this) {
            last = streams.remove(stream) && streams.isEmpty();
            terminate = last && shutdownStatus != null;
        }
        if (last) {
            listener.transportInUse(false);
        }
        if (terminate) {
            terminate();
        }
    }

    @Override
    public void shutdown(Status reason) {
        boolean idle;
        synchronized (this) {
            if (shutdownStatus != null) {
                return;
            }
            shutdownStatus = reason;
            idle = streams.isEmpty();
        }
        listener.transportShutdown(reason, SimpleDisconnectError.SUBCHANNEL_SHUTDOWN);
        if (idle) {
            terminate();
        }
    }

    @Override
    public void shutdownNow(Status reason) {
        shutdown(reason);
        List<ClientStreamImpl> open;
        synchronized (this) {
            open = streams.snapshot();
        }
        for (ClientStreamImpl s : open) {
            s.cancel(reason);
        }
        terminate();
    }

    private void terminate() {
        RpcClient c;
        synchronized (this) {
            if (terminated) {
                return;
            }
            terminated = true;
            c = client;
            if (liveness != null) {
                liveness.cancel(false);
            }
        }
        if (c != null) {
            c.close();
        }
        listener.transportTerminated();
    }

    @Override
    public void ping(PingCallback callback, Executor executor) {
        executor.execute(() -> callback.onFailure(Status.UNIMPLEMENTED.withDescription(
                "the rdmarpc transport has no gRPC ping; its connections keep themselves alive (TcpConfig.pingInterval)")));
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
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

    @Override
    public String toString() {
        return "rdmarpc-grpc transport to " + address;
    }
}
