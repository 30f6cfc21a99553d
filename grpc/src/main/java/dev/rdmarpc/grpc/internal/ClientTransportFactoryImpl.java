package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.rpc.RpcClient;
import io.grpc.ChannelCredentials;
import io.grpc.ChannelLogger;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.SharedResourceHolder;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

/** Makes a {@link ClientTransportImpl} for each address gRPC's load balancer connects to. */
final class ClientTransportFactoryImpl implements ClientTransportFactory {
    private final Function<InetSocketAddress, RpcClient> connector;
    private final boolean secure;
    private final int maxInbound;
    private final ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    private boolean closed;

    ClientTransportFactoryImpl(Function<InetSocketAddress, RpcClient> connector, boolean secure, int maxInbound) {
        this.connector = connector;
        this.secure = secure;
        this.maxInbound = maxInbound;
    }

    @Override
    public ConnectionClientTransport newClientTransport(SocketAddress serverAddress, ClientTransportOptions options,
                                                        ChannelLogger channelLogger) {
        if (!(serverAddress instanceof InetSocketAddress inet)) {
            throw new IllegalArgumentException("the rdmarpc transport connects to IP addresses, not " + serverAddress);
        }
        InetSocketAddress resolved = inet.isUnresolved() ? new InetSocketAddress(inet.getHostString(), inet.getPort()) : inet;
        return new ClientTransportImpl(resolved, connector, timer, secure, maxInbound);
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return timer;
    }

    @Override
    public SwapChannelCredentialsResult swapChannelCredentials(ChannelCredentials channelCreds) {
        return null;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
        }
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
