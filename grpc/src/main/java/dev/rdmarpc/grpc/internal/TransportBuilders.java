package dev.rdmarpc.grpc.internal;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedChannelImplBuilder;
import io.grpc.internal.ServerImplBuilder;
import java.net.InetSocketAddress;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Where the public builders meet grpc-java's internal ones: every use of {@code io.grpc.internal}
 * is in this package, which the module does not export.
 */
public final class TransportBuilders {
    private TransportBuilders() {
    }

    /**
     * @param target     a gRPC target ({@code dns:///host:port}, {@code host:port}, a user's scheme)
     * @param connector  connects one rdmarpc client to an address gRPC resolved
     * @param secure     whether the connections use TLS
     * @param maxInbound the channel's largest inbound message, read when the channel is built
     * @return grpc-java's own channel builder over this transport
     */
    public static ManagedChannelBuilder<?> channel(String target, Function<InetSocketAddress, RpcClient> connector,
                                                   Supplier<Boolean> secure, IntSupplier maxInbound) {
        return new ManagedChannelImplBuilder(target,
                () -> new ClientTransportFactoryImpl(connector, secure.get(), maxInbound.getAsInt()),
                () -> secure.get() ? GrpcUtil.DEFAULT_PORT_SSL : GrpcUtil.DEFAULT_PORT_PLAINTEXT);
    }

    /**
     * @param server     the rdmarpc server builder, bound and configured, read when the server is built
     * @param bind       the address the server listens on (its port may be 0 until it starts)
     * @param secure     whether the server uses TLS
     * @param maxInbound the largest inbound message, read when the server is built
     * @return grpc-java's own server builder over this transport
     */
    public static ServerBuilder<?> server(Supplier<RpcServer.Builder> server, InetSocketAddress bind, Supplier<Boolean> secure,
                                          IntSupplier maxInbound) {
        return new ServerImplBuilder(tracers -> new InternalServerImpl(server.get(), bind, tracers, maxInbound.getAsInt(),
                secure.get()));
    }

    /** @return gRPC's default largest inbound message (4 MiB) */
    public static int defaultMaxInbound() {
        return GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;
    }
}
