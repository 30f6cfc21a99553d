package dev.rdmarpc.grpc;

import dev.rdmarpc.grpc.internal.TransportBuilders;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import io.grpc.ForwardingServerBuilder;
import io.grpc.ServerBuilder;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Builds gRPC's own {@link io.grpc.Server} listening with rdmarpc instead of HTTP/2: services,
 * interceptors, executors, handler registries, tracers and grpc-services' health and reflection
 * services work as on any gRPC server. Every gRPC call arrives as one rdmarpc stream.
 * {@snippet :
 * Server server = RdmarpcServerBuilder.forPort(50051).addService(new GreeterImpl()).build().start();
 * }
 * Only {@link RdmarpcChannelBuilder}'s channels can call it: an HTTP/2 client that reaches the port
 * is refused at once (rdmarpc closes a connection whose first bytes are not its hello). Not
 * thread-safe, like every builder; the server it builds is.
 */
public final class RdmarpcServerBuilder extends ForwardingServerBuilder<RdmarpcServerBuilder> {
    private final InetSocketAddress address;
    private final ServerBuilder<?> delegate;
    private final List<Consumer<RpcServer.Builder>> settings = new ArrayList<>();
    private Consumer<TcpConfig> tcp;
    private Consumer<RdmaConfig> rdma;
    private TlsConfig tls;
    private int maxInbound = TransportBuilders.defaultMaxInbound();

    private RdmarpcServerBuilder(InetSocketAddress address) {
        this.address = address;
        this.delegate = TransportBuilders.server(this::rpcServer, address, () -> tls != null, () -> maxInbound);
    }

    /**
     * @param port the port on every local address; 0 picks a free one ({@link io.grpc.Server#getPort()})
     * @return a builder for a server on {@code port}, over TCP until told otherwise
     */
    public static RdmarpcServerBuilder forPort(int port) {
        return new RdmarpcServerBuilder(new InetSocketAddress(port));
    }

    /**
     * @param address an {@link InetSocketAddress} to listen on
     * @return a builder for a server on {@code address}
     */
    public static RdmarpcServerBuilder forAddress(SocketAddress address) {
        if (!(address instanceof InetSocketAddress inet)) {
            throw new IllegalArgumentException("rdmarpc listens on IP addresses, not " + address);
        }
        return new RdmarpcServerBuilder(inet);
    }

    /**
     * Uses TCP (the default) with the settings {@code settings} makes to rdmarpc's
     * {@link TcpConfig}.
     *
     * @param settings adjusts the configuration
     * @return this
     */
    public RdmarpcServerBuilder tcp(Consumer<TcpConfig> settings) {
        this.tcp = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * Uses RDMA with rdmarpc's default {@link RdmaConfig}; the server still accepts TCP clients on
     * its port, as every rdmarpc RDMA server does.
     *
     * @return this
     */
    public RdmarpcServerBuilder rdma() {
        return rdma(cfg -> { });
    }

    /**
     * Uses RDMA with the settings {@code settings} makes to rdmarpc's {@link RdmaConfig}.
     *
     * @param settings adjusts the configuration
     * @return this
     */
    public RdmarpcServerBuilder rdma(Consumer<RdmaConfig> settings) {
        this.rdma = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * Uses TLS over TCP (rdmarpc's {@link TlsConfig}, e.g. {@code TlsConfig.forServer(chain, key)}).
     *
     * @param config the server's TLS settings
     * @return this
     */
    public RdmarpcServerBuilder tls(TlsConfig config) {
        this.tls = Objects.requireNonNull(config, "config");
        return this;
    }

    /**
     * Any other setting of the rdmarpc server beneath: its {@code streamWindowBytes},
     * {@code maxFrameLength}, {@code maxInFlight} (calls at once, default 10,000).
     *
     * @param settings adjusts the rdmarpc server builder
     * @return this
     */
    public RdmarpcServerBuilder rdmarpc(Consumer<RpcServer.Builder> settings) {
        this.settings.add(Objects.requireNonNull(settings, "settings"));
        return this;
    }

    /**
     * TLS from PEM files: {@code tls(TlsConfig.forServer(certChain, privateKey))}.
     *
     * @return this
     */
    @Override
    public RdmarpcServerBuilder useTransportSecurity(File certChain, File privateKey) {
        return tls(TlsConfig.forServer(certChain.toPath(), privateKey.toPath()));
    }

    /**
     * The largest message a call accepts (default 4 MiB, as gRPC's): a longer one fails its call
     * with {@code RESOURCE_EXHAUSTED}, unread; the connection carries on.
     *
     * @param bytes the limit
     * @return this
     */
    @Override
    public RdmarpcServerBuilder maxInboundMessageSize(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxInboundMessageSize must be at least 0: " + bytes);
        }
        this.maxInbound = bytes;
        return this;
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }

    private RpcServer.Builder rpcServer() {
        RpcServer.Builder b = RpcServer.builder().bind(address);
        if (rdma != null) {
            b.rdma(rdma);
        } else if (tcp != null || tls != null) {
            Consumer<TcpConfig> t = tcp;
            TlsConfig s = tls;
            b.tcp(cfg -> {
                if (t != null) {
                    t.accept(cfg);
                }
                if (s != null) {
                    cfg.tls(s);
                }
            });
        }
        for (Consumer<RpcServer.Builder> s : settings) {
            s.accept(b);
        }
        return b;
    }
}
