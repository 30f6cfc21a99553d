package dev.rdmarpc.grpc;

import dev.rdmarpc.grpc.internal.TransportBuilders;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import io.grpc.ForwardingChannelBuilder2;
import io.grpc.ManagedChannelBuilder;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Builds gRPC's own {@link io.grpc.ManagedChannel} with rdmarpc beneath it instead of HTTP/2: each
 * address gRPC's name resolver gives is one rdmarpc connection ({@link RpcClient}), each call one
 * rdmarpc stream. Everything above the transport is grpc-java's: name resolution, load balancing,
 * service config, retries, deadlines, interceptors, compression, tracers.
 * {@snippet :
 * ManagedChannel channel = RdmarpcChannelBuilder.forAddress("localhost", 50051).build();  // TCP
 * ManagedChannel rdma = RdmarpcChannelBuilder.forTarget("dns:///svc:50051").rdma().build();
 * GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel);
 * }
 * The server must be an {@link RdmarpcServerBuilder}'s: an HTTP/2 gRPC server does not speak this
 * transport. Not thread-safe, like every builder; the channel it builds is.
 */
public final class RdmarpcChannelBuilder extends ForwardingChannelBuilder2<RdmarpcChannelBuilder> {
    private final ManagedChannelBuilder<?> delegate;
    private final List<Consumer<RpcClient.Builder>> settings = new ArrayList<>();
    private Consumer<TcpConfig> tcp;
    private Consumer<RdmaConfig> rdma;
    private TlsConfig tls;
    private int maxInbound = TransportBuilders.defaultMaxInbound();

    private RdmarpcChannelBuilder(String target) {
        this.delegate = TransportBuilders.channel(target, this::connect, () -> tls != null, () -> maxInbound);
    }

    /**
     * @param target a gRPC target: {@code host:port}, {@code dns:///host:port}, or a scheme of a
     *               registered {@link io.grpc.NameResolverProvider}
     * @return a builder for a channel to {@code target}, over TCP until told otherwise
     */
    public static RdmarpcChannelBuilder forTarget(String target) {
        return new RdmarpcChannelBuilder(Objects.requireNonNull(target, "target"));
    }

    /**
     * @param host a host name or IP address
     * @param port its port
     * @return a builder for a channel to {@code host:port}
     */
    public static RdmarpcChannelBuilder forAddress(String host, int port) {
        String h = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
        return forTarget(h + ":" + port);
    }

    /**
     * Uses TCP (the default) with the settings {@code settings} makes to rdmarpc's
     * {@link TcpConfig}; each connection has a transport of its own.
     *
     * @param settings adjusts the configuration, e.g. {@code cfg -> cfg.loop(l -> l.ioThreads(1))}
     * @return this
     */
    public RdmarpcChannelBuilder tcp(Consumer<TcpConfig> settings) {
        this.tcp = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * Uses RDMA with rdmarpc's default {@link RdmaConfig}: the server must have been built with
     * {@link RdmarpcServerBuilder#rdma()}.
     *
     * @return this
     */
    public RdmarpcChannelBuilder rdma() {
        return rdma(cfg -> { });
    }

    /**
     * Uses RDMA with the settings {@code settings} makes to rdmarpc's {@link RdmaConfig}.
     *
     * @param settings adjusts the configuration, e.g. {@code cfg -> cfg.device("mlx5_0")}
     * @return this
     */
    public RdmarpcChannelBuilder rdma(Consumer<RdmaConfig> settings) {
        this.rdma = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * Uses TLS over TCP (rdmarpc's {@link TlsConfig}, e.g. {@code TlsConfig.forClient().trust(caPem)}).
     *
     * @param config the client's TLS settings
     * @return this
     */
    public RdmarpcChannelBuilder tls(TlsConfig config) {
        this.tls = Objects.requireNonNull(config, "config");
        return this;
    }

    /**
     * Any other setting of the rdmarpc client beneath, applied to every connection's builder after
     * the transport is chosen: its {@code streamWindowBytes} (each call's flow-control window),
     * {@code maxFrameLength} (default 16 MiB: the longest message plus one byte either way),
     * {@code maxOutstanding} (calls at once on one connection), {@code connectTimeout}.
     *
     * @param settings adjusts the rdmarpc client builder
     * @return this
     */
    public RdmarpcChannelBuilder rdmarpc(Consumer<RpcClient.Builder> settings) {
        this.settings.add(Objects.requireNonNull(settings, "settings"));
        return this;
    }

    /** Plain TCP is the default unless {@link #tls} is called; this does nothing. */
    @Override
    public RdmarpcChannelBuilder usePlaintext() {
        return this;
    }

    /**
     * @throws IllegalStateException unless {@link #tls} was called: TLS needs rdmarpc's settings
     */
    @Override
    public RdmarpcChannelBuilder useTransportSecurity() {
        if (tls == null) {
            throw new IllegalStateException("call tls(TlsConfig) to use TLS over rdmarpc");
        }
        return this;
    }

    /**
     * The largest message this channel's calls accept (default 4 MiB, as gRPC's): a longer one
     * fails its call with {@code RESOURCE_EXHAUSTED}, unread; the connection carries on.
     *
     * @param bytes the limit
     * @return this
     */
    @Override
    public RdmarpcChannelBuilder maxInboundMessageSize(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxInboundMessageSize must be at least 0: " + bytes);
        }
        this.maxInbound = bytes;
        return this;
    }

    @Override
    protected ManagedChannelBuilder<?> delegate() {
        return delegate;
    }

    private RpcClient connect(InetSocketAddress address) {
        RpcClient.Builder b = RpcClient.builder().address(address);
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
        for (Consumer<RpcClient.Builder> s : settings) {
            s.accept(b);
        }
        return b.connect();
    }
}
