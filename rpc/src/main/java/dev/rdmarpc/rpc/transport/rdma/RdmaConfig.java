package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the RDMA transport, with fluent setters and documented defaults, validated once by
 * {@link #conclude()} before use (the transport calls it). Plain data: creating, setting and
 * validating one loads nothing native, so a builder may hold one without touching libibverbs.
 *
 * <p>Memory per connection with the defaults (all of it registered, that is pinned, memory from the
 * transport's buffer pool): receive buffers ({@link #receiveQueueDepth} + {@value #RESERVED_RECEIVES}
 * reserved for credit messages) x {@link #chunkSize} = (8 + 3) x 256 KiB = 2.75 MiB, growing to
 * (32 + 3) x 256 KiB = 8.75 MiB when the peer keeps running out of credits; send buffers: at most
 * {@link #sendWindow} chunks in flight (4 x 256 KiB = 1 MiB) plus whatever the application has queued
 * behind them (bounded by {@link #writeHighWaterMark}, 8 MiB). Small messages share chunks, so a
 * connection with little traffic holds one send chunk at most. Per I/O thread: two completion queues
 * of {@link #completionQueueSize} entries (about 2 x 4096 x 64 B = 512 KiB of device memory).
 *
 * <p>With {@link #sharedReceiveQueue(boolean)} a connection holds no receive buffers: each I/O thread
 * has one shared receive queue per device of {@link #sharedReceiveQueueDepth} chunks (64 x 256 KiB =
 * 16 MiB, growing to {@link #maxSharedReceiveQueueDepth}, 64 MiB), whatever the number of connections.
 *
 * <p>Every setting takes its default from the system property {@code rdmarpc.rdma.<setting>} when
 * that is set ({@code -Drdmarpc.rdma.receiveQueueDepth=16}, {@code -Drdmarpc.rdma.chunkSize=64K},
 * {@code -Drdmarpc.rdma.idleStrategy=busy-poll}, {@code -Drdmarpc.rdma.handshakeTimeout=30s}; byte
 * counts take K, M, G; durations ns, us, ms, s; {@link #systemProperties()} lists them): defaults a
 * deployment can change without code, which setters still override.
 *
 * <p>Not thread-safe; configure on one thread, then hand it to a builder (which copies it).
 */
public final class RdmaConfig {
    private static final SettingsTable<RdmaConfig> SETTINGS = new SettingsTable<RdmaConfig>("RdmaConfig", "rdmarpc.rdma.")
            // device and port
            .add("device", t -> t.equals("auto") ? null : t, RdmaConfig::device, RdmaConfig::device)
            .add("port", SettingsTable::parseInt, RdmaConfig::port, RdmaConfig::port)
            .add("gidIndex", t -> t.equals("auto") ? RdmaConfig.AUTO_GID_INDEX : Integer.parseInt(t), RdmaConfig::gidIndex,
                    RdmaConfig::gidIndex)
            // receive queues
            .add("chunkSize", SettingsTable::parseIntBytes, RdmaConfig::chunkSize, RdmaConfig::chunkSize)
            .add("receiveQueueDepth", SettingsTable::parseInt, RdmaConfig::receiveQueueDepth, RdmaConfig::receiveQueueDepth)
            .add("maxReceiveQueueDepth", SettingsTable::parseInt, RdmaConfig::maxReceiveQueueDepth,
                    RdmaConfig::maxReceiveQueueDepth)
            // shared receive queue
            .add("sharedReceiveQueue", SettingsTable::parseBoolean, RdmaConfig::sharedReceiveQueue,
                    RdmaConfig::sharedReceiveQueue)
            .add("sharedReceiveQueueDepth", SettingsTable::parseInt, RdmaConfig::sharedReceiveQueueDepth,
                    RdmaConfig::sharedReceiveQueueDepth)
            .add("maxSharedReceiveQueueDepth", SettingsTable::parseInt, RdmaConfig::maxSharedReceiveQueueDepth,
                    RdmaConfig::maxSharedReceiveQueueDepth)
            .add("sharedReceiveQueueCredits", SettingsTable::parseInt, RdmaConfig::sharedReceiveQueueCredits,
                    RdmaConfig::sharedReceiveQueueCredits)
            // sending
            .add("sendWindow", SettingsTable::parseInt, RdmaConfig::sendWindow, RdmaConfig::sendWindow)
            .add("inlineThreshold", SettingsTable::parseIntBytes, RdmaConfig::inlineThreshold, RdmaConfig::inlineThreshold)
            .add("writeHighWaterMark", SettingsTable::parseBytes, RdmaConfig::writeHighWaterMark,
                    RdmaConfig::writeHighWaterMark)
            // pool
            .add("poolBytes", SettingsTable::parseBytes, RdmaConfig::poolBytes, RdmaConfig::poolBytes)
            .add("slabBytes", SettingsTable::parseBytes, RdmaConfig::slabBytes, RdmaConfig::slabBytes)
            .add("poolHighWaterMark", t -> t.equals("auto") ? -1L : SettingsTable.parseBytes(t),
                    RdmaConfig::poolHighWaterMark, RdmaConfig::poolHighWaterMark)
            // polling
            .add("ioThreads", SettingsTable::parseInt, RdmaConfig::ioThreads, RdmaConfig::ioThreads)
            .add("completionQueueSize", SettingsTable::parseInt, RdmaConfig::completionQueueSize,
                    RdmaConfig::completionQueueSize)
            .add("idleStrategy", SettingsTable::parseIdleStrategy, RdmaConfig::idleStrategy, RdmaConfig::idleStrategy)
            .add("threadNamePrefix", t -> t, RdmaConfig::threadNamePrefix, RdmaConfig::threadNamePrefix)
            // timeouts
            .add("tickInterval", SettingsTable::parseDuration, RdmaConfig::tickInterval, RdmaConfig::tickInterval)
            .add("handshakeTimeout", SettingsTable::parseDuration, RdmaConfig::handshakeTimeout,
                    RdmaConfig::handshakeTimeout)
            .add("ackTimeout", SettingsTable::parseInt, RdmaConfig::ackTimeout, RdmaConfig::ackTimeout);

    /** Receive buffers posted beyond the credited depth, for credit-only messages (see docs/rdma.md). */
    public static final int RESERVED_RECEIVES = 3;

    /** Default receive buffer (and largest single SEND) size: 256 KiB. */
    public static final int DEFAULT_CHUNK_SIZE = 256 * 1024;
    /** Default receive buffers credited to the peer per connection: 8. */
    public static final int DEFAULT_RECEIVE_QUEUE_DEPTH = 8;
    /** Default bound the receive depth may grow to: 32. */
    public static final int DEFAULT_MAX_RECEIVE_QUEUE_DEPTH = 32;
    /** Default number of SENDs in flight per connection: 4. */
    public static final int DEFAULT_SEND_WINDOW = 4;
    /** Default inline threshold: messages up to 256 bytes are copied into the work request. */
    public static final int DEFAULT_INLINE_THRESHOLD = 256;
    /** Default completion queue size (entries, per queue, per I/O thread): 4096. */
    public static final int DEFAULT_COMPLETION_QUEUE_SIZE = 4096;
    /** Default registered buffer pool size: 512 MiB. */
    public static final long DEFAULT_POOL_BYTES = 512L * 1024 * 1024;
    /** Default slab size (one memory registration each): 8 MiB. */
    public static final long DEFAULT_SLAB_BYTES = 8L * 1024 * 1024;
    /** Default bound on queued unsent bytes per connection: 8 MiB. */
    public static final long DEFAULT_WRITE_HIGH_WATER_MARK = 8L * 1024 * 1024;
    /** Default tick period (call timeouts are swept on it): 10 ms. */
    public static final Duration DEFAULT_TICK_INTERVAL = Duration.ofMillis(10);
    /** Default local ACK timeout code: 14, that is 4.096 us x 2^14 = 67 ms before a packet is sent again. */
    public static final int DEFAULT_ACK_TIMEOUT = 14;
    /** Default receives first posted to each shared receive queue (per I/O thread and device): 64. */
    public static final int DEFAULT_SHARED_RECEIVE_QUEUE_DEPTH = 64;
    /** Default bound a shared receive queue may grow to: 256. */
    public static final int DEFAULT_MAX_SHARED_RECEIVE_QUEUE_DEPTH = 256;
    /** Default credits granted to each connection's peer when receiving through a shared receive queue: 8. */
    public static final int DEFAULT_SHARED_RECEIVE_QUEUE_CREDITS = 8;
    /** Value of {@link #gidIndex} meaning: choose the RoCE v2 GID of the address in use. */
    public static final int AUTO_GID_INDEX = -1;

    private String device;
    private int port = 1;
    private int gidIndex = AUTO_GID_INDEX;
    private int chunkSize = DEFAULT_CHUNK_SIZE;
    private int receiveQueueDepth = DEFAULT_RECEIVE_QUEUE_DEPTH;
    private int maxReceiveQueueDepth = DEFAULT_MAX_RECEIVE_QUEUE_DEPTH;
    private int sendWindow = DEFAULT_SEND_WINDOW;
    private int inlineThreshold = DEFAULT_INLINE_THRESHOLD;
    private int completionQueueSize = DEFAULT_COMPLETION_QUEUE_SIZE;
    private IdleStrategy idleStrategy = IdleStrategy.event();
    private long poolBytes = DEFAULT_POOL_BYTES;
    private long slabBytes = DEFAULT_SLAB_BYTES;
    private long poolHighWaterMark = -1;
    private boolean sharedReceiveQueue;
    private int sharedReceiveQueueDepth = DEFAULT_SHARED_RECEIVE_QUEUE_DEPTH;
    private int maxSharedReceiveQueueDepth = DEFAULT_MAX_SHARED_RECEIVE_QUEUE_DEPTH;
    private int sharedReceiveQueueCredits = DEFAULT_SHARED_RECEIVE_QUEUE_CREDITS;
    private int ioThreads = 1;
    private long writeHighWaterMark = DEFAULT_WRITE_HIGH_WATER_MARK;
    private Duration tickInterval = DEFAULT_TICK_INTERVAL;
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private int ackTimeout = DEFAULT_ACK_TIMEOUT;
    private String threadNamePrefix = "rdmarpc-rdma";

    /** Creates a configuration with the defaults (the system properties' where set). */
    public RdmaConfig() {
        SETTINGS.applySystemProperties(this);
    }

    /** @return the system properties that give this class its defaults, {@code rdmarpc.rdma.<setting>} */
    public static java.util.List<String> systemProperties() {
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
     * @param bytes size of one receive buffer and of the largest single SEND, a power of two in
     *              [4 KiB, 16 MiB]; default 256 KiB. Frames up to this size travel in one message and
     *              are handed to handlers in place; larger ones are split into chunks of this size.
     *              Each connection holds {@code (receiveQueueDepth + 3)} of them.
     * @return this
     */
    public RdmaConfig chunkSize(int bytes) {
        this.chunkSize = bytes;
        return this;
    }

    /**
     * @param n receive buffers posted per connection and credited to the peer, in [1, 4096];
     *          default 8 (2 MiB at the default chunk size, plus 3 reserved)
     * @return this
     */
    public RdmaConfig receiveQueueDepth(int n) {
        this.receiveQueueDepth = n;
        return this;
    }

    /**
     * @param n the most receive buffers a connection may grow to when its peer keeps running out of
     *          credits, at least {@link #receiveQueueDepth}, at most 16384; default 32 (8 MiB at the
     *          default chunk size). Equal to the depth: no growth.
     * @return this
     */
    public RdmaConfig maxReceiveQueueDepth(int n) {
        this.maxReceiveQueueDepth = n;
        return this;
    }

    /**
     * @param n SENDs in flight per connection, in [1, 1024]; default 4 (up to 1 MiB at the default
     *          chunk size). While all are in flight, small messages are coalesced into one chunk.
     * @return this
     */
    public RdmaConfig sendWindow(int n) {
        this.sendWindow = n;
        return this;
    }

    /**
     * @param bytes messages up to this size are sent inline (copied into the work request, no DMA
     *              read of the buffer), in [0, 1024]; default 256. The device's own limit applies
     *              on top; 0 disables inline sends.
     * @return this
     */
    public RdmaConfig inlineThreshold(int bytes) {
        this.inlineThreshold = bytes;
        return this;
    }

    /**
     * @param entries size of each of the two completion queues (send, receive) of an I/O thread, in
     *                [64, 1048576]; default 4096. It bounds how many connections one thread can
     *                carry: each reserves {@code maxReceiveQueueDepth + 3} receive entries and
     *                {@code sendWindow + 2} send entries.
     * @return this
     */
    public RdmaConfig completionQueueSize(int entries) {
        this.completionQueueSize = entries;
        return this;
    }

    /**
     * @param idle how I/O threads wait for completions: {@link IdleStrategy#event()} (the default)
     *             sleeps on the completion channel until the device signals, with one wake-up per
     *             burst because only the last message of a burst asks for an event (solicited
     *             events); {@link IdleStrategy#busyPoll()} polls the completion queues without ever
     *             sleeping (lowest latency, one core per I/O thread); {@link IdleStrategy#backOff}
     *             polls for a while after the last completion, then sleeps as event does
     * @return this
     */
    public RdmaConfig idleStrategy(IdleStrategy idle) {
        this.idleStrategy = Objects.requireNonNull(idle, "idle");
        return this;
    }

    /**
     * @param bytes the most registered memory the transport's buffer pool may hold (chunks for
     *              receive and send buffers), at least one slab; default 512 MiB
     * @return this
     */
    public RdmaConfig poolBytes(long bytes) {
        this.poolBytes = bytes;
        return this;
    }

    /**
     * @param bytes size of one slab of the pool, registered with each device once, a multiple of
     *              {@link #chunkSize}; default 8 MiB
     * @return this
     */
    public RdmaConfig slabBytes(long bytes) {
        this.slabBytes = bytes;
        return this;
    }

    /**
     * @param bytes pool bytes in use above which new connections are refused (with a clear error on
     *              both sides) while existing ones keep working; at most {@link #poolBytes}; default
     *              -1, meaning three quarters of {@link #poolBytes} (384 MiB)
     * @return this
     */
    public RdmaConfig poolHighWaterMark(long bytes) {
        this.poolHighWaterMark = bytes;
        return this;
    }

    /**
     * @param enabled true to receive through one shared receive queue per I/O thread and device
     *                instead of one receive queue per connection, so receive memory does not grow
     *                with the number of connections; default false (see docs/rdma.md for the
     *                trade-off). Either side may enable it on its own: the peer sees only credits.
     * @return this
     */
    public RdmaConfig sharedReceiveQueue(boolean enabled) {
        this.sharedReceiveQueue = enabled;
        return this;
    }

    /**
     * @param depth chunk-sized receives first posted to each shared receive queue (one per I/O thread
     *              and device), whatever the number of connections, in [1, 65536]; default 64, that
     *              is 64 x 256 KiB = 16 MiB. Used only with {@link #sharedReceiveQueue(boolean)}
     * @return this
     */
    public RdmaConfig sharedReceiveQueueDepth(int depth) {
        this.sharedReceiveQueueDepth = depth;
        return this;
    }

    /**
     * @param depth the most receives a shared receive queue grows to when fewer than a quarter of
     *              its receives remain posted, in [{@link #sharedReceiveQueueDepth}, 65536] and at
     *              most {@link #completionQueueSize}; default 256 (64 MiB with 256 KiB chunks). Used
     *              only with {@link #sharedReceiveQueue(boolean)}
     * @return this
     */
    public RdmaConfig maxSharedReceiveQueueDepth(int depth) {
        this.maxSharedReceiveQueueDepth = depth;
        return this;
    }

    /**
     * @param credits data messages each peer may send before this side returns credits, when this
     *                side receives through a shared receive queue, in [1, 4096]; default 8. The
     *                queue is shared, not reserved: connections x credits may exceed its depth, and
     *                then a burst from every peer at once can find it empty (the peer's device
     *                retries after an RNR NAK; see docs/rdma.md). Used only with
     *                {@link #sharedReceiveQueue(boolean)}
     * @return this
     */
    public RdmaConfig sharedReceiveQueueCredits(int credits) {
        this.sharedReceiveQueueCredits = credits;
        return this;
    }

    /**
     * @param n RDMA I/O threads (each with its completion queues and its connections), in [1, 256];
     *          default 1
     * @return this
     */
    public RdmaConfig ioThreads(int n) {
        this.ioThreads = n;
        return this;
    }

    /**
     * @param bytes bytes of responses committed but not yet sent on one accepted (server) connection
     *              above which it stops handling requests (their receives are not posted again, so
     *              the client runs out of credits) until they drain to half the mark; default 8 MiB.
     *              Client connections never stop handling responses: their requests are bounded by
     *              the RPC client before they are queued.
     * @return this
     */
    public RdmaConfig writeHighWaterMark(long bytes) {
        this.writeHighWaterMark = bytes;
        return this;
    }

    /**
     * @param interval period of the connections' ticks (call timeouts), in [1 ms, 60 s]; default 10 ms
     * @return this
     */
    public RdmaConfig tickInterval(Duration interval) {
        this.tickInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    /**
     * @param timeout how long the RDMA hello exchange may take after the TCP connection is up;
     *                default 5 s
     * @return this
     */
    public RdmaConfig handshakeTimeout(Duration timeout) {
        this.handshakeTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * @param code the queue pairs' local ACK timeout, 4.096 us x 2^code before unacknowledged packets
     *             are sent again (7 times, then the connection fails), in [1, 31]; default 14 (67 ms).
     *             Raise it where acknowledgements are slow (software RDMA on a loaded or emulated CPU).
     * @return this
     */
    public RdmaConfig ackTimeout(int code) {
        this.ackTimeout = code;
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

    /** @return the chunk size */
    public int chunkSize() {
        return chunkSize;
    }

    /** @return the initial receive depth */
    public int receiveQueueDepth() {
        return receiveQueueDepth;
    }

    /** @return the receive depth bound */
    public int maxReceiveQueueDepth() {
        return maxReceiveQueueDepth;
    }

    /** @return the send window */
    public int sendWindow() {
        return sendWindow;
    }

    /** @return the inline threshold */
    public int inlineThreshold() {
        return inlineThreshold;
    }

    /** @return the completion queue size */
    public int completionQueueSize() {
        return completionQueueSize;
    }

    /** @return how I/O threads wait for completions */
    public IdleStrategy idleStrategy() {
        return idleStrategy;
    }

    /** @return the pool size */
    public long poolBytes() {
        return poolBytes;
    }

    /** @return the slab size */
    public long slabBytes() {
        return slabBytes;
    }

    /** @return the pool high-water mark in bytes (resolved by {@link #conclude()}) */
    public long poolHighWaterMark() {
        return poolHighWaterMark;
    }

    /** @return true when receiving through shared receive queues */
    public boolean sharedReceiveQueue() {
        return sharedReceiveQueue;
    }

    /** @return receives first posted to each shared receive queue */
    public int sharedReceiveQueueDepth() {
        return sharedReceiveQueueDepth;
    }

    /** @return the most receives a shared receive queue grows to */
    public int maxSharedReceiveQueueDepth() {
        return maxSharedReceiveQueueDepth;
    }

    /** @return credits granted to each peer when receiving through a shared receive queue */
    public int sharedReceiveQueueCredits() {
        return sharedReceiveQueueCredits;
    }

    /** @return the number of I/O threads */
    public int ioThreads() {
        return ioThreads;
    }

    /** @return the write high-water mark */
    public long writeHighWaterMark() {
        return writeHighWaterMark;
    }

    /** @return the tick interval */
    public Duration tickInterval() {
        return tickInterval;
    }

    /** @return the handshake timeout */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** @return the local ACK timeout code */
    public int ackTimeout() {
        return ackTimeout;
    }

    /** @return the thread name prefix */
    public String threadNamePrefix() {
        return threadNamePrefix;
    }

    /**
     * Validates the settings and resolves the automatic ones that need no device (the pool
     * high-water mark).
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
        if (chunkSize < 4096 || chunkSize > (16 << 20) || Integer.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException("chunkSize must be a power of two in [4 KiB, 16 MiB]: " + chunkSize);
        }
        if (receiveQueueDepth < 1 || receiveQueueDepth > 4096) {
            throw new IllegalArgumentException("receiveQueueDepth must be in [1, 4096]: " + receiveQueueDepth);
        }
        if (maxReceiveQueueDepth < receiveQueueDepth || maxReceiveQueueDepth > 16384) {
            throw new IllegalArgumentException("maxReceiveQueueDepth must be in [receiveQueueDepth (" + receiveQueueDepth
                    + "), 16384]: " + maxReceiveQueueDepth);
        }
        if (sendWindow < 1 || sendWindow > 1024) {
            throw new IllegalArgumentException("sendWindow must be in [1, 1024]: " + sendWindow);
        }
        if (inlineThreshold < 0 || inlineThreshold > 1024) {
            throw new IllegalArgumentException("inlineThreshold must be in [0, 1024]: " + inlineThreshold);
        }
        if (completionQueueSize < 64 || completionQueueSize > (1 << 20)) {
            throw new IllegalArgumentException("completionQueueSize must be in [64, 1048576]: " + completionQueueSize);
        }
        int perConnection = maxReceiveQueueDepth + RESERVED_RECEIVES;
        if (!sharedReceiveQueue && perConnection > completionQueueSize) {
            throw new IllegalArgumentException("completionQueueSize (" + completionQueueSize
                    + ") cannot hold one connection's receives (maxReceiveQueueDepth + 3 = " + perConnection + ")");
        }
        if (sharedReceiveQueueDepth < 1 || sharedReceiveQueueDepth > 65536) {
            throw new IllegalArgumentException("sharedReceiveQueueDepth must be in [1, 65536]: " + sharedReceiveQueueDepth);
        }
        if (maxSharedReceiveQueueDepth < sharedReceiveQueueDepth || maxSharedReceiveQueueDepth > 65536) {
            throw new IllegalArgumentException("maxSharedReceiveQueueDepth must be in [sharedReceiveQueueDepth ("
                    + sharedReceiveQueueDepth + "), 65536]: " + maxSharedReceiveQueueDepth);
        }
        if (sharedReceiveQueueCredits < 1 || sharedReceiveQueueCredits > 4096) {
            throw new IllegalArgumentException("sharedReceiveQueueCredits must be in [1, 4096]: " + sharedReceiveQueueCredits);
        }
        if (sharedReceiveQueue && maxSharedReceiveQueueDepth > completionQueueSize) {
            throw new IllegalArgumentException("completionQueueSize (" + completionQueueSize
                    + ") cannot hold the completions of a full shared receive queue (maxSharedReceiveQueueDepth = "
                    + maxSharedReceiveQueueDepth + ")");
        }
        if (slabBytes < chunkSize || slabBytes % chunkSize != 0 || slabBytes > (1L << 30)) {
            throw new IllegalArgumentException("slabBytes must be a multiple of chunkSize (" + chunkSize
                    + ") and at most 1 GiB: " + slabBytes);
        }
        if (poolBytes < slabBytes) {
            throw new IllegalArgumentException("poolBytes must hold at least one slab (" + slabBytes + " bytes): " + poolBytes);
        }
        long minimum = (long) (receiveQueueDepth + RESERVED_RECEIVES + 1) * chunkSize;
        if (poolBytes < minimum) {
            throw new IllegalArgumentException("poolBytes (" + poolBytes + ") cannot hold one connection: it needs "
                    + minimum + " bytes ((receiveQueueDepth + 3 + 1) x chunkSize)");
        }
        long srqMinimum = (long) (sharedReceiveQueueDepth + 1) * chunkSize;
        if (sharedReceiveQueue && poolBytes < srqMinimum) {
            throw new IllegalArgumentException("poolBytes (" + poolBytes + ") cannot hold one shared receive queue: it needs "
                    + srqMinimum + " bytes ((sharedReceiveQueueDepth + 1) x chunkSize)");
        }
        if (poolHighWaterMark == -1) {
            poolHighWaterMark = poolBytes / 4 * 3;
        } else if (poolHighWaterMark < 0 || poolHighWaterMark > poolBytes) {
            throw new IllegalArgumentException("poolHighWaterMark must be in [0, poolBytes (" + poolBytes
                    + ")] or -1 for three quarters of it: " + poolHighWaterMark);
        }
        if (ioThreads < 1 || ioThreads > 256) {
            throw new IllegalArgumentException("ioThreads must be in [1, 256]: " + ioThreads);
        }
        if (writeHighWaterMark < 1) {
            throw new IllegalArgumentException("writeHighWaterMark must be positive: " + writeHighWaterMark);
        }
        if (tickInterval.toMillis() < 1 || tickInterval.toSeconds() > 60) {
            throw new IllegalArgumentException("tickInterval must be in [1 ms, 60 s]: " + tickInterval);
        }
        if (ackTimeout < 1 || ackTimeout > 31) {
            throw new IllegalArgumentException("ackTimeout must be in [1, 31]: " + ackTimeout);
        }
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive: " + handshakeTimeout);
        }
        return this;
    }

    /** @return an independent copy */
    public RdmaConfig copy() {
        RdmaConfig c = new RdmaConfig();
        SETTINGS.copy(this, c);
        return c;
    }

    /** @return every setting, {@code name=value}, in the order of the settings table */
    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
