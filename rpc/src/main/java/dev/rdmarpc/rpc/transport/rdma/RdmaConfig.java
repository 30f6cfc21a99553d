package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.ConnectionLimits;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.LoopSettings;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Settings of the RDMA transport, with fluent setters and documented defaults, validated once by
 * {@link #conclude()} before use (the transport calls it). Plain data: creating, setting and
 * validating one loads nothing native, so a builder may hold one without touching libibverbs.
 *
 * <p>Besides the device, its port and GID, the I/O threads and the pool's admission mark, the
 * settings come in groups, each edited in place through a lambda:
 * {@snippet :
 * RdmaConfig config = new RdmaConfig().device("mlx5_0")
 *         .loop(l -> l.ioThreads(2).idleStrategy(IdleStrategy.busyPoll()))            // LoopSettings
 *         .bufferPool(p -> p.chunkSize(64 * 1024).maxPooledBytes(1L << 30))       // BufferPool.Config
 *         .receiveQueue(q -> q.depth(16).maxDepth(64))
 *         .sharedReceiveQueue(s -> s.enabled(true).depth(128).credits(8))
 *         .send(s -> s.window(8).inlineThreshold(128))
 *         .polling(p -> p.completionQueueSize(8192))
 *         .timeouts(t -> t.handshake(Duration.ofSeconds(30)).ackTimeout(18));
 * }
 * The pool is configured with {@link BufferPool.Config} itself ({@link #bufferPool(Consumer)}), with
 * RDMA's defaults: 256 KiB chunks, 8 MiB slabs (one memory registration each), 512 MiB of chunks and
 * 512 MiB of large buffers.
 *
 * <p>Memory per connection with the defaults (all of it registered, that is pinned, memory from the
 * transport's buffer pool): receive buffers ({@link ReceiveQueueSettings#depth} + {@value #RESERVED_RECEIVES}
 * reserved for credit messages) x chunk size = (8 + 3) x 256 KiB = 2.75 MiB, growing to
 * (32 + 3) x 256 KiB = 8.75 MiB when the peer keeps running out of credits; send buffers: at most
 * {@link SendSettings#window} chunks in flight (4 x 256 KiB = 1 MiB) plus whatever the application has queued
 * behind them (bounded by {@link SendSettings#writeHighWaterMark}, 8 MiB). Small messages share chunks, so a
 * connection with little traffic holds one send chunk at most. Per I/O thread: two completion queues
 * of {@link PollingSettings#completionQueueSize} entries (about 2 x 4096 x 64 B = 512 KiB of device memory).
 *
 * <p>With {@link SharedReceiveQueueSettings#enabled(boolean)} a connection holds no receive buffers: each I/O
 * thread has one shared receive queue per device of {@link SharedReceiveQueueSettings#depth} chunks (64 x
 * 256 KiB = 16 MiB, growing to {@link SharedReceiveQueueSettings#maxDepth}, 64 MiB), whatever the number of
 * connections.
 *
 * <p>Every setting takes its default from a system property when that is set:
 * {@code rdmarpc.rdma.<setting>} for the top-level ones ({@code -Drdmarpc.rdma.ioThreads=2}) and
 * {@code rdmarpc.rdma.<group>.<setting>} for a group's ({@code -Drdmarpc.rdma.receiveQueue.depth=16},
 * {@code -Drdmarpc.rdma.bufferPool.chunkSize=64K}, {@code -Drdmarpc.rdma.polling.idleStrategy=busy-poll},
 * {@code -Drdmarpc.rdma.timeouts.handshake=30s}; byte counts take K, M, G; durations ns, us, ms, s;
 * {@link #systemProperties()} lists them): defaults a deployment can change without code, which
 * setters still override. The pool's group reads {@code rdmarpc.rdma.bufferPool.*}, not the
 * {@code rdmarpc.pool.*} of pools made elsewhere.
 *
 * <p>Not thread-safe; configure on one thread, then hand it to a builder (which copies it).
 */
public final class RdmaConfig {
    private static final SettingsTable<RdmaConfig> SETTINGS = new SettingsTable<RdmaConfig>("RdmaConfig", "rdmarpc.rdma.")
            .add("device", t -> t.equals("auto") ? null : t, RdmaConfig::device, RdmaConfig::device)
            .add("port", SettingsTable::parseInt, RdmaConfig::port, RdmaConfig::port)
            .add("gidIndex", t -> t.equals("auto") ? RdmaConfig.AUTO_GID_INDEX : Integer.parseInt(t), RdmaConfig::gidIndex,
                    RdmaConfig::gidIndex)
            .addFrom(LoopSettings.settingsTable(), "ioThreads", RdmaConfig::loop)
            .add("threadNamePrefix", t -> t, RdmaConfig::threadNamePrefix, RdmaConfig::threadNamePrefix)
            .group("bufferPool", BufferPool.Config.settingsTable(), RdmaConfig::bufferPool)
            .add("poolHighWaterMark", t -> t.equals("auto") ? RdmaConfig.AUTO_POOL_HIGH_WATER_MARK : SettingsTable.parseBytes(t),
                    RdmaConfig::poolHighWaterMark, RdmaConfig::poolHighWaterMark)
            .add("poolBytesPerAddress", t -> t.equals("auto") ? RdmaConfig.AUTO_POOL_BYTES_PER_ADDRESS : SettingsTable.parseBytes(t),
                    RdmaConfig::poolBytesPerAddress, RdmaConfig::poolBytesPerAddress)
            .group("receiveQueue", ReceiveQueueSettings.SETTINGS, RdmaConfig::receiveQueue)
            .group("sharedReceiveQueue", SharedReceiveQueueSettings.SETTINGS, RdmaConfig::sharedReceiveQueue)
            .group("send", SendSettings.SETTINGS, RdmaConfig::send)
            .group("polling", PollingSettings.SETTINGS, RdmaConfig::polling)
            .group("timeouts", TimeoutSettings.SETTINGS, RdmaConfig::timeouts)
            .group("limits", ConnectionLimits.settingsTable(), RdmaConfig::limits)
            .add("tls", null, RdmaConfig::tls, RdmaConfig::tls); // by code only: keys are not a property

    /** Receive buffers posted beyond the credited depth, for credit-only messages (see docs/rdma.md). */
    public static final int RESERVED_RECEIVES = 3;

    /** Default chunk size of the pool (receive buffer and largest single SEND): 256 KiB. */
    public static final int DEFAULT_CHUNK_SIZE = 256 * 1024;
    /** Default slab size of the pool (one memory registration each): 8 MiB. */
    public static final long DEFAULT_SLAB_SIZE = 8L * 1024 * 1024;
    /** Default bound on the pool's chunk slabs: 512 MiB. */
    public static final long DEFAULT_MAX_POOLED_BYTES = 512L * 1024 * 1024;
    /** Default bound on the pool's large buffers: 512 MiB. */
    public static final long DEFAULT_MAX_LARGE_BYTES = 512L * 1024 * 1024;
    /** Value of {@link #poolBytesPerAddress} meaning: a quarter of the pool's high-water mark. */
    public static final long AUTO_POOL_BYTES_PER_ADDRESS = -1;
    /** Value of {@link #poolHighWaterMark} meaning: three quarters of the pool's chunk bytes. */
    public static final long AUTO_POOL_HIGH_WATER_MARK = -1;
    /** Default receive buffers credited to the peer per connection: 8. */
    public static final int DEFAULT_RECEIVE_QUEUE_DEPTH = 8;
    /** Default bound the receive depth may grow to: 32. */
    public static final int DEFAULT_MAX_RECEIVE_QUEUE_DEPTH = 32;
    /** Default receives first posted to each shared receive queue (per I/O thread and device): 64. */
    public static final int DEFAULT_SHARED_RECEIVE_QUEUE_DEPTH = 64;
    /** Default bound a shared receive queue may grow to: 256. */
    public static final int DEFAULT_MAX_SHARED_RECEIVE_QUEUE_DEPTH = 256;
    /** Default credits granted to each connection's peer when receiving through a shared receive queue: 8. */
    public static final int DEFAULT_SHARED_RECEIVE_QUEUE_CREDITS = 8;
    /** Default number of SENDs in flight per connection: 4. */
    public static final int DEFAULT_SEND_WINDOW = 4;
    /** Default inline threshold: messages up to 256 bytes are copied into the work request. */
    public static final int DEFAULT_INLINE_THRESHOLD = 256;
    /** Default bound on queued unsent bytes per connection: 8 MiB. */
    public static final long DEFAULT_WRITE_HIGH_WATER_MARK = 8L * 1024 * 1024;
    /**
     * Default {@link SendSettings#rendezvousThreshold}: 1 MiB, frames of 1 MiB and more are read by the peer.
     * It is the smallest size at which rendezvous was measured at least level with split SENDs in the
     * Soft-RoCE VM (echo, one connection, rendezvous on and off interleaved in each round; medians of
     * the per-round ratios on / off): 1.02 to 1.14 at 1 MiB and 1.24 to 1.68 at 8 MiB across runs,
     * but 0.62 to 0.95 at 256 KiB (docs/performance-archive.md, section 4). On Soft-RoCE, where rxe
     * executes a memory-window bind again when it retransmits, a frame's windows are bound only while
     * the connection is idle, and a frame that finds it busy is registered on its own instead
     * (docs/rdma.md, "Rendezvous"). It has run on no RDMA hardware.
     */
    public static final int DEFAULT_RENDEZVOUS_THRESHOLD = 1 << 20;
    /** The rendezvous threshold most rendezvous tests use, below the default: frames of 512 KiB and more. */
    public static final int SUGGESTED_RENDEZVOUS_THRESHOLD = 512 * 1024;
    /** Default completion queue size (entries, per queue, per I/O thread): 4096. */
    public static final int DEFAULT_COMPLETION_QUEUE_SIZE = 4096;
    /** The default tick period: {@link LoopSettings#DEFAULT_TICK_INTERVAL}, 10 ms. */
    public static final Duration DEFAULT_TICK_INTERVAL = LoopSettings.DEFAULT_TICK_INTERVAL;
    /** The default tick period of an idle I/O thread: {@link LoopSettings#DEFAULT_IDLE_TICK_INTERVAL}, 250 ms. */
    public static final Duration DEFAULT_IDLE_TICK_INTERVAL = LoopSettings.DEFAULT_IDLE_TICK_INTERVAL;
    /** Default handshake timeout: 5 s. */
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);
    /** Default idle timeout of an accepted connection: 5 minutes, as {@code TcpConfig#idleTimeout}. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);
    /** Default time a frame may take once it started arriving: 30 s, as {@code TcpConfig#frameReadTimeout}. */
    public static final Duration DEFAULT_FRAME_READ_TIMEOUT = Duration.ofSeconds(30);
    /** Default local ACK timeout code: 14, that is 4.096 us x 2^14 = 67 ms before a packet is sent again. */
    public static final int DEFAULT_ACK_TIMEOUT = 14;
    /** Value of {@link #gidIndex} meaning: choose the RoCE v2 GID of the address in use. */
    public static final int AUTO_GID_INDEX = -1;

    private String device;
    private int port = 1;
    private int gidIndex = AUTO_GID_INDEX;
    private String threadNamePrefix = "rdmarpc-rdma";
    private final BufferPool.Config bufferPool = BufferPool.Config.builtInDefaults().chunkSize(DEFAULT_CHUNK_SIZE)
            .slabSize(DEFAULT_SLAB_SIZE).maxPooledBytes(DEFAULT_MAX_POOLED_BYTES).maxLargeBytes(DEFAULT_MAX_LARGE_BYTES);
    private long poolHighWaterMark = AUTO_POOL_HIGH_WATER_MARK;
    private long poolBytesPerAddress = AUTO_POOL_BYTES_PER_ADDRESS;
    private final ReceiveQueueSettings receiveQueue = new ReceiveQueueSettings();
    private final SharedReceiveQueueSettings sharedReceiveQueue = new SharedReceiveQueueSettings();
    private final SendSettings send = new SendSettings();
    private final PollingSettings polling = new PollingSettings();
    private final TimeoutSettings timeouts = new TimeoutSettings();
    private final ConnectionLimits limits = new ConnectionLimits();
    private TlsConfig tls;

    /** Creates a configuration with the defaults (the system properties' where set). */
    public RdmaConfig() {
        SETTINGS.applySystemProperties(this);
    }

    private RdmaConfig(boolean systemProperties) {
        if (systemProperties) {
            SETTINGS.applySystemProperties(this);
        }
    }

    /**
     * @return the system properties that give this class its defaults, {@code rdmarpc.rdma.<setting>}
     *         and {@code rdmarpc.rdma.<group>.<setting>}
     */
    public static List<String> systemProperties() {
        return SETTINGS.properties();
    }

    /**
     * @param name the RDMA device to use ({@code ibv_devices} lists them, e.g. "mlx5_0", "rxe0"), or
     *             null for automatic: the device whose network interface owns the local address of
     *             the connection (default)
     * @return this
     */
    public RdmaConfig device(String name) {
        this.device = name;
        return this;
    }

    /**
     * @param port the device port, from 1; default 1
     * @return this
     */
    public RdmaConfig port(int port) {
        this.port = port;
        return this;
    }

    /**
     * @param index the GID table index, or {@link #AUTO_GID_INDEX} (default) for the RoCE v2 GID of
     *              the local address in use (the IPv4-mapped or IPv6 GID of that address)
     * @return this
     */
    public RdmaConfig gidIndex(int index) {
        this.gidIndex = index;
        return this;
    }

    /**
     * @param prefix name prefix of the RDMA I/O threads; default "rdmarpc-rdma"
     * @return this
     */
    public RdmaConfig threadNamePrefix(String prefix) {
        this.threadNamePrefix = Objects.requireNonNull(prefix, "prefix");
        return this;
    }

    /**
     * Edits the settings of the transport's registered buffer pool in place. RDMA's defaults:
     * {@link BufferPool.Config#chunkSize} 256 KiB (the size of one receive buffer and of the largest
     * single SEND, a power of two in [4 KiB, 16 MiB] here: frames up to this size travel in one
     * message and are handed to handlers in place, larger ones are split into chunks of this size;
     * each connection holds {@code receiveQueue.depth + 3} of them), {@link BufferPool.Config#slabSize}
     * 8 MiB (registered with each device once, at most 1 GiB here),
     * {@link BufferPool.Config#maxPooledBytes} 512 MiB (all registered chunk memory, receive and send
     * buffers) and {@link BufferPool.Config#maxLargeBytes} 512 MiB (buffers of frames larger than a
     * chunk). A {@link BufferPool.Config#slabListener} given here is kept: the transport registers
     * each new slab with its devices, then calls it; it calls it before deregistering a slab.
     *
     * @param settings what to change, e.g. {@code p -> p.chunkSize(64 * 1024)}
     * @return this
     */
    public RdmaConfig bufferPool(Consumer<BufferPool.Config> settings) {
        settings.accept(bufferPool);
        return this;
    }

    /**
     * Replaces every setting of the pool, RDMA's defaults included, by those of {@code config}
     * (copied: later changes to it do not reach this configuration). To change a few settings and
     * keep RDMA's defaults for the others, use {@link #bufferPool(Consumer)}.
     *
     * @param config the pool's settings
     * @return this
     */
    public RdmaConfig bufferPool(BufferPool.Config config) {
        BufferPool.Config.settingsTable().copy(Objects.requireNonNull(config, "config"), bufferPool);
        return this;
    }

    /**
     * @param bytes pool bytes in use above which new connections are refused (with a clear error on
     *              both sides) while existing ones keep working; at most the pool's
     *              {@link BufferPool.Config#maxPooledBytes}; default {@link #AUTO_POOL_HIGH_WATER_MARK}
     *              (-1, property value "auto"), meaning three quarters of it (384 MiB)
     * @return this
     */
    public RdmaConfig poolHighWaterMark(long bytes) {
        this.poolHighWaterMark = bytes;
        return this;
    }

    /**
     * @param bytes most registered pool bytes that a server's RDMA connections from one remote IP
     *              address may claim at their hellos (each claims what {@link #poolHighWaterMark}
     *              counts for it: its first receive buffers, {@code (receiveQueue.depth + 3)} chunks,
     *              2.75 MiB by default, or one chunk with a shared receive queue); a hello over it is
     *              refused with {@code RESOURCE_EXHAUSTED} and the reason, like one over the mark.
     *              Default {@link #AUTO_POOL_BYTES_PER_ADDRESS} (-1, property value "auto"): a quarter
     *              of the high-water mark (96 MiB, 34 connections at the defaults), so one host cannot
     *              pin what the others need. Raise it for a server with few client hosts that open
     *              many connections each.
     * @return this
     */
    public RdmaConfig poolBytesPerAddress(long bytes) {
        this.poolBytesPerAddress = bytes;
        return this;
    }

    /** @return the registered bytes one address's connections may claim, once concluded; -1 before for automatic */
    public long poolBytesPerAddress() {
        return poolBytesPerAddress;
    }

    /**
     * Edits the per-connection receive queue's settings in place.
     *
     * @param settings what to change, e.g. {@code q -> q.depth(16).maxDepth(64)}
     * @return this
     */
    public RdmaConfig receiveQueue(Consumer<ReceiveQueueSettings> settings) {
        settings.accept(receiveQueue);
        return this;
    }

    /**
     * Edits the shared receive queue's settings in place.
     *
     * @param settings what to change, e.g. {@code s -> s.enabled(true).depth(128)}
     * @return this
     */
    public RdmaConfig sharedReceiveQueue(Consumer<SharedReceiveQueueSettings> settings) {
        settings.accept(sharedReceiveQueue);
        return this;
    }

    /**
     * Edits the send side's settings in place.
     *
     * @param settings what to change, e.g. {@code s -> s.window(8)}
     * @return this
     */
    public RdmaConfig send(Consumer<SendSettings> settings) {
        settings.accept(send);
        return this;
    }

    /**
     * Edits the completion queues the I/O threads poll, in place.
     *
     * @param settings what to change, e.g. {@code p -> p.completionQueueSize(8192)}
     * @return this
     */
    public RdmaConfig polling(Consumer<PollingSettings> settings) {
        settings.accept(polling);
        return this;
    }

    /**
     * Edits the I/O threads' settings in place: how many, on which CPUs, how they wait and tick (the
     * settings TCP's event loops have too, declared once by {@link LoopSettings}). Their properties
     * are {@code rdmarpc.rdma.ioThreads} and {@code rdmarpc.rdma.polling.<setting>} for the others.
     *
     * @param settings what to change, e.g. {@code l -> l.ioThreads(2).idleStrategy(IdleStrategy.busyPoll())}
     * @return this
     */
    public RdmaConfig loop(Consumer<LoopSettings> settings) {
        settings.accept(polling.loop());
        return this;
    }

    /**
     * Edits the timeouts in place.
     *
     * @param settings what to change, e.g. {@code t -> t.handshake(Duration.ofSeconds(30))}
     * @return this
     */
    public RdmaConfig timeouts(Consumer<TimeoutSettings> settings) {
        settings.accept(timeouts);
        return this;
    }

    /**
     * Edits the limits on accepted connections in place: how many a server takes in all (default
     * 4096) and from one address (512), counted on the TCP connection every RDMA connection starts
     * with. A peer over a limit is refused with {@code RESOURCE_EXHAUSTED} "connection limit: ...":
     * an RDMA client in its hello (its connect fails), a plain TCP client in a connection-level
     * error (its calls fail). See {@link ConnectionLimits}.
     *
     * @param settings what to change, e.g. {@code l -> l.maxConnectionsPerAddress(64)}
     * @return this
     */
    public RdmaConfig limits(Consumer<ConnectionLimits> settings) {
        settings.accept(limits);
        return this;
    }

    /** @return the limits on accepted connections: this configuration's own */
    public ConnectionLimits limits() {
        return limits;
    }

    /**
     * Puts the TCP connection every RDMA connection starts on behind TLS: the hello (and so the
     * queue pair's creation) and the liveness channel travel over it, so a server creates a queue
     * pair only for a peer that completed the handshake (under mutual TLS: that proved a trusted
     * certificate), and handlers of RDMA calls see the same identity
     * ({@code CallContext.tlsSession}, {@code peerPrincipal}). The data on the queue pair itself is
     * not encrypted: see docs/rdma.md, "TLS". Plain TCP clients of an RDMA server go through TLS too.
     * Default null: no TLS.
     *
     * @param tls the keys, trust and rules, or null
     * @return this
     */
    public RdmaConfig tls(TlsConfig tls) {
        this.tls = tls;
        return this;
    }

    /** @return the TLS settings of the hello's TCP connection, or null */
    public TlsConfig tls() {
        return tls;
    }

    /** @return the device name, or null for automatic */
    public String device() {
        return device;
    }

    /** @return the port */
    public int port() {
        return port;
    }

    /** @return the GID index, or {@link #AUTO_GID_INDEX} */
    public int gidIndex() {
        return gidIndex;
    }

    /** @return the thread name prefix */
    public String threadNamePrefix() {
        return threadNamePrefix;
    }

    /** @return the pool's settings: this configuration's own, so changes to them apply to it */
    public BufferPool.Config bufferPool() {
        return bufferPool;
    }

    /** @return the pool high-water mark in bytes (resolved by {@link #conclude()}) */
    public long poolHighWaterMark() {
        return poolHighWaterMark;
    }

    /** @return the receive queue's settings: this configuration's own */
    public ReceiveQueueSettings receiveQueue() {
        return receiveQueue;
    }

    /** @return the shared receive queue's settings: this configuration's own */
    public SharedReceiveQueueSettings sharedReceiveQueue() {
        return sharedReceiveQueue;
    }

    /** @return the send side's settings: this configuration's own */
    public SendSettings send() {
        return send;
    }

    /** @return the I/O threads' settings: this configuration's own */
    public LoopSettings loop() {
        return polling.loop();
    }

    /** @return the polling settings: this configuration's own */
    public PollingSettings polling() {
        return polling;
    }

    /** @return the timeouts: this configuration's own */
    public TimeoutSettings timeouts() {
        return timeouts;
    }

    /**
     * Validates the settings and resolves the automatic ones that need no device (the pool
     * high-water mark). A group's setting is named {@code group.setting}, as its property is.
     *
     * @return this
     * @throws IllegalArgumentException naming the first bad setting and its allowed range
     */
    public RdmaConfig conclude() {
        if (device != null && (device.isBlank() || device.length() > 64)) {
            throw new IllegalArgumentException("device must be a device name (1 to 64 characters) or null for automatic: '"
                    + device + "'");
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port must be in [1, 255]: " + port);
        }
        if (gidIndex != AUTO_GID_INDEX && (gidIndex < 0 || gidIndex > 255)) {
            throw new IllegalArgumentException("gidIndex must be in [0, 255] or AUTO_GID_INDEX (-1): " + gidIndex);
        }
        RdmaConfigChecks.poolAndQueues(this);
        long pooled = bufferPool.maxPooledBytes();
        if (poolHighWaterMark == AUTO_POOL_HIGH_WATER_MARK) {
            poolHighWaterMark = pooled / 4 * 3;
        } else if (poolHighWaterMark < 0 || poolHighWaterMark > pooled) {
            throw new IllegalArgumentException("poolHighWaterMark must be in [0, bufferPool.maxPooledBytes (" + pooled
                    + ")] or -1 for three quarters of it: " + poolHighWaterMark);
        }
        if (poolBytesPerAddress == AUTO_POOL_BYTES_PER_ADDRESS) {
            poolBytesPerAddress = poolHighWaterMark / 4;
        } else if (poolBytesPerAddress < 0) {
            throw new IllegalArgumentException("poolBytesPerAddress must not be negative, or -1 for a quarter of poolHighWaterMark: "
                    + poolBytesPerAddress);
        }
        return this;
    }

    /** @return an independent copy: its groups are its own */
    public RdmaConfig copy() {
        RdmaConfig c = new RdmaConfig(false);
        SETTINGS.copy(this, c);
        return c;
    }

    /** @return every setting, {@code name=value}, in the order of the settings table, groups' nested */
    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
