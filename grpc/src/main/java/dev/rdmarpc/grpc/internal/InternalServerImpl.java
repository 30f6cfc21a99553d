package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.rpc.RpcServer;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalInstrumented;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InternalServer;
import io.grpc.internal.ServerListener;
import io.grpc.internal.SharedResourceHolder;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/** The listening side: an rdmarpc server whose one stream method carries every gRPC call. */
final class InternalServerImpl implements InternalServer {
    private final RpcServer.Builder builder;
    private final SocketAddress bind;
    private final List<? extends ServerStreamTracer.Factory> tracers;
    private final int maxInbound;
    private final boolean secure;
    private ScheduledExecutorService timer;
    private ServerListener listener;
    private volatile RpcServer server;
    private ServerTransportImpl transport;

    InternalServerImpl(RpcServer.Builder builder, SocketAddress bind, List<? extends ServerStreamTracer.Factory> tracers,
                       int maxInbound, boolean secure) {
        this.builder = builder;
        this.bind = bind;
        this.tracers = tracers;
        this.maxInbound = maxInbound;
        this.secure = secure;
    }

    @Override
    public void start(ServerListener listener) throws IOException {
        this.listener = listener;
        timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
        ServerTransportImpl t = new ServerTransportImpl(tracers, timer, maxInbound, secure);
        ServerTransportImpl[] holder = {t};
        try {
            server = builder.registerStream(Wire.method(maxInbound),
                    (dev.rdmarpc.rpc.AsyncStreamHandler<Object, Object>) s -> holder[0].open(s)).start();
        } catch (RuntimeException e) {
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
            throw new IOException("the rdmarpc server could not start: " + e.getMessage(), e);
        }
        transport = t;
        io.grpc.internal.ServerTransportListener tl = listener.transportCreated(t);
        t.started(tl, server);
        tl.transportReady(io.grpc.Attributes.EMPTY);
    }

    @Override
    public void shutdown() {
        if (transport != null) {
            transport.refuseNewCalls();
        }
        if (listener != null) {
            listener.serverShutdown();
        }
        if (timer != null) {
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
            timer = null;
        }
    }

    @Override
    public SocketAddress getListenSocketAddress() {
        RpcServer s = server;
        return s == null ? bind : s.address();
    }

    @Override
    public InternalInstrumented<SocketStats> getListenSocketStats() {
        return null;
    }

    @Override
    public List<? extends SocketAddress> getListenSocketAddresses() {
        return List.of(getListenSocketAddress());
    }

    @Override
    public List<InternalInstrumented<SocketStats>> getListenSocketStatsList() {
        return List.of();
    }
}
