package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.internal.RdmaSupport;
import dev.rdmarpc.rpc.internal.Settings;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.MetadataBlock;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.util.List;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.function.Consumer;

/**
 * The settings every builder of this package shares ({@link RpcServer.Builder},
 * {@link RpcClient.Builder}, {@link RpcClientPool.Builder}): the maximum frame length and the
 * transport. Self-typed, so that its setters return the concrete builder.
 *
 * <p>One way to choose the transport, one of three:
 * <ul>
 * <li>{@link #tcp(Consumer)} (the default): the builder creates and owns a
 * {@link TcpTransport}, configured by a {@link TcpConfig} the lambda adjusts
 * ({@code .tcp(cfg -> cfg.loop(l -> l.ioThreads(2).idleStrategy(IdleStrategy.backOff(spin))))}).</li>
 * <li>{@link #rdma()}, {@link #rdma(Consumer)} or {@link #rdma(RdmaConfig)}: the builder creates and
 * owns an RDMA transport. Without one of these nothing of RDMA is loaded.</li>
 * <li>{@link #transport(Transport)}: a transport the caller created, shares among any number of
 * clients and servers, and closes after them.</li>
 * </ul>
 * Choosing two kinds on one builder is an error; choosing one kind again replaces the earlier choice.
 *
 * <p>Defaults, strongest first: what the {@code tcp(cfg -> ...)} or {@code rdma(cfg -> ...)} lambda
 * (or a given {@link RdmaConfig}) sets; the {@code rdmarpc.tcp.*} and {@code rdmarpc.rdma.*} system
 * properties ({@code -Drdmarpc.tcp.ioThreads=2}, see {@link TcpConfig}); the builder's
 * defaults for its role (a client's and a pool's TCP transport has 1 I/O thread, a server's one per
 * core; threads are named {@code rdmarpc-client-*}, {@code rdmarpc-pool-*}, {@code rdmarpc-server-*},
 * with {@code -rdma} for RDMA); then the configuration class's own defaults. So a property changes
 * every transport a builder creates, and a setter in the lambda changes this one.
 *
 * <p>Not thread-safe; use one builder per object built.
 *
 * @param <B> the concrete builder
 */
public abstract sealed class RpcBuilder<B extends RpcBuilder<B>> permits ClientBuilder, RpcServer.Builder {
    /** The builder's defaults for what it creates: thread names, TCP I/O threads (0: the config's). */
    enum Role {
        CLIENT("rdmarpc-client", 1),
        POOL("rdmarpc-pool", 1),
        SERVER("rdmarpc-server", 0);

        final String threadNamePrefix;
        final int ioThreads;

        Role(String threadNamePrefix, int ioThreads) {
            this.threadNamePrefix = threadNamePrefix;
            this.ioThreads = ioThreads;
        }
    }

    /** The default of {@link #streamWindowBytes(int)}: 1 MiB. */
    static final int DEFAULT_STREAM_WINDOW_BYTES = 1 << 20;

    private int maxFrameLength = FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH;
    private int maxMetadataBytes = MetadataBlock.DEFAULT_MAX_BYTES;
    private int streamWindowBytes = DEFAULT_STREAM_WINDOW_BYTES;
    /** Which of tcp, rdma, transport was chosen, for the error when another is; null: TCP by default. */
    private String chosen;
    private Consumer<TcpConfig> tcp;
    private Consumer<RdmaConfig> rdmaSettings;
    private RdmaConfig rdmaConfig;
    private Transport transport;

    RpcBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * @param bytes the largest frame sent or accepted (header + payload + attachment); default
     *              {@value FrameDescriptor#DEFAULT_MAX_FRAME_LENGTH}; at most
     *              {@value FrameDescriptor#MAX_FRAME_LENGTH_LIMIT}. Use the same value on clients
     *              and servers.
     * @return this
     */
    public B maxFrameLength(int bytes) {
        this.maxFrameLength = bytes;
        return self();
    }

    /**
     * The most bytes of metadata ({@link Metadata#encodedLength()}) one frame may carry, sent or
     * received: a client refuses to send a request with more ({@link Status#PAYLOAD_TOO_LARGE},
     * nothing sent) and fails a call whose response has more; a server answers a request with more
     * PAYLOAD_TOO_LARGE without running it, and sends PAYLOAD_TOO_LARGE instead of a response with
     * more. Use the same value on clients and servers.
     *
     * @param bytes in [0, {@value MetadataBlock#MAX_BYTES_LIMIT}] (0: no metadata at all); default
     *              {@value MetadataBlock#DEFAULT_MAX_BYTES} (8 KiB, as gRPC's default header list)
     * @return this
     */
    public B maxMetadataBytes(int bytes) {
        this.maxMetadataBytes = bytes;
        return self();
    }

    /**
     * How many bytes of one stream's messages this side holds unread before the peer must wait (the
     * stream's receive window, counted in frames: each message's payload plus its 32-byte header).
     * A stream's reader that stops reading holds back only its own writer; this side's memory for
     * the stream stays within this plus one message. Larger windows keep a fast link busy over a
     * longer round trip; smaller ones hold less memory per stream (see {@link ClientStream}).
     *
     * @param bytes at least {@value FrameDescriptor#STREAM_INITIAL_WINDOW} (the window every stream
     *              starts with), at most 1 GiB; default 1 MiB (gRPC-java's default window)
     * @return this
     */
    public B streamWindowBytes(int bytes) {
        this.streamWindowBytes = bytes;
        return self();
    }

    /** @return the stream window, validated */
    final int checkedStreamWindowBytes() {
        if (streamWindowBytes < FrameDescriptor.STREAM_INITIAL_WINDOW || streamWindowBytes > (1 << 30)) {
            throw new IllegalArgumentException("streamWindowBytes must be in [" + FrameDescriptor.STREAM_INITIAL_WINDOW
                    + ", " + (1 << 30) + "]: " + streamWindowBytes);
        }
        return streamWindowBytes;
    }

    /** @return the metadata limit, validated */
    final int checkedMaxMetadataBytes() {
        if (maxMetadataBytes < 0 || maxMetadataBytes > MetadataBlock.MAX_BYTES_LIMIT) {
            throw new IllegalArgumentException("maxMetadataBytes must be in [0, " + MetadataBlock.MAX_BYTES_LIMIT + "]: "
                    + maxMetadataBytes);
        }
        return maxMetadataBytes;
    }

    /**
     * Uses a TCP transport the builder creates and owns (the default), with the settings
     * {@code settings} makes to a {@link TcpConfig} holding the defaults (see the class
     * comment for their order). Validated when the transport is created.
     *
     * @param settings adjusts the configuration, e.g. {@code cfg -> cfg.loop(l -> l.ioThreads(2))}
     * @return this
     */
    public B tcp(Consumer<TcpConfig> settings) {
        choose("tcp()");
        this.tcp = Objects.requireNonNull(settings, "settings");
        return self();
    }

    /**
     * Uses an RDMA transport with the default {@link RdmaConfig}, like coro_rpc's
     * {@code init_ibv()}: the same calls then travel over a reliable-connected queue pair. A server
     * started so still accepts plain TCP clients on its port; a client needs such a server. Needs
     * libibverbs and an RDMA device; without an {@code rdma} call nothing of RDMA is loaded.
     *
     * @return this
     */
    public B rdma() {
        return rdma(settings -> { });
    }

    /**
     * Uses an RDMA transport the builder creates and owns, with the settings {@code settings} makes
     * to an {@link RdmaConfig} holding the defaults. Validated when the transport is created.
     *
     * @param settings adjusts the configuration, e.g. {@code cfg -> cfg.device("mlx5_0")}
     * @return this
     */
    public B rdma(Consumer<RdmaConfig> settings) {
        choose("rdma()");
        this.rdmaSettings = Objects.requireNonNull(settings, "settings");
        this.rdmaConfig = null;
        return self();
    }

    /**
     * Uses an RDMA transport the builder creates and owns, with {@code config} (copied now, validated
     * when the transport is created). Its threads take the builder's name for its role unless the
     * config names them.
     *
     * @param config the RDMA settings
     * @return this
     */
    public B rdma(RdmaConfig config) {
        choose("rdma()");
        this.rdmaConfig = Objects.requireNonNull(config, "config").copy();
        this.rdmaSettings = null;
        return self();
    }

    /**
     * Uses {@code transport}, which the caller owns: share one among many clients and servers, and
     * close it after them.
     *
     * @param transport the transport
     * @return this
     */
    public B transport(Transport transport) {
        choose("transport()");
        this.transport = Objects.requireNonNull(transport, "transport");
        return self();
    }

    private void choose(String kind) {
        if (chosen != null && !chosen.equals(kind)) {
            throw new IllegalStateException(kind + " cannot be combined with " + chosen + ": a builder uses one transport");
        }
        chosen = kind;
    }

    /** @return the maximum frame length, validated */
    final int checkedMaxFrameLength() {
        Settings.checkMaxFrame(maxFrameLength);
        return maxFrameLength;
    }

    /**
     * @return the implementation the built objects run on: this module's {@link RpcProvider}, found
     *         once with {@link ServiceLoader}
     * @throws IllegalStateException when there is none (a repackaged jar that lost its service entry)
     */
    static RpcProvider provider() {
        return Provider.INSTANCE;
    }

    /**
     * Holds the provider, found when first needed: the one of this module (on the module path a
     * provider of another module is passed over; on the class path, all share the unnamed module).
     */
    private static final class Provider {
        static final RpcProvider INSTANCE = ServiceLoader.load(RpcProvider.class, RpcProvider.class.getClassLoader())
                .stream().filter(p -> p.type().getModule() == RpcProvider.class.getModule())
                .findFirst().map(ServiceLoader.Provider::get)
                .orElseThrow(() -> new IllegalStateException("no " + RpcProvider.class.getName()
                        + " found: this module provides one (module-info, META-INF/services); was it repackaged without?"));
    }

    /** What a builder makes on its transport: a client, a pool, a server. */
    @FunctionalInterface
    interface OnTransport<T> {
        /**
         * @param transport the chosen transport
         * @param owns      true when the builder created it: the object made owns it then and closes it
         * @return the object made
         */
        T make(Transport transport, boolean owns);
    }

    /**
     * Opens the chosen transport and makes the built object on it; when making it fails, a transport
     * this builder created is closed before the failure is rethrown.
     *
     * @param role whose defaults apply to a transport the builder creates
     * @return what {@code make} made
     */
    final <T> T makeOnTransport(Role role, OnTransport<T> make) {
        boolean owns = transport == null;
        Transport t = openTransport(role);
        try {
            return make.make(t, owns);
        } catch (RuntimeException e) {
            if (owns) {
                t.close();
            }
            throw e;
        }
    }

    /**
     * @param role whose defaults apply
     * @return the chosen transport: the caller's, or a new one (owned by the object being built)
     */
    private Transport openTransport(Role role) {
        if (transport != null) {
            return transport;
        }
        if (rdmaConfig != null || rdmaSettings != null) {
            return RdmaSupport.create(rdmaConfig, rdmaSettings, role.threadNamePrefix + "-rdma");
        }
        TcpConfig config = new TcpConfig();
        List<String> properties = TcpConfig.systemProperties();
        if (!Settings.propertySet(properties, "threadNamePrefix")) {
            config.threadNamePrefix(role.threadNamePrefix);
        }
        if (role.ioThreads > 0 && !Settings.propertySet(properties, "ioThreads")) {
            config.loop().ioThreads(role.ioThreads);
        }
        if (tcp != null) {
            tcp.accept(config);
        }
        return TcpTransport.create(config);
    }
}
