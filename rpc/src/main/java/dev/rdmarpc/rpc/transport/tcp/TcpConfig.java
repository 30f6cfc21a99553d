package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.stream.SocketSettings;
import dev.rdmarpc.rpc.transport.ConnectionLimits;
import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.LoopSettings;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Settings of a {@link TcpTransport}, fluent, with documented defaults; validated once by
 * {@link #conclude()}.
 *
 * <p>Every setting but the buffer pool (which has its own, {@code rdmarpc.pool.*}) takes its
 * default from the system property {@code rdmarpc.tcp.<setting>} when that is set
 * ({@code -Drdmarpc.tcp.ioThreads=2}, {@code -Drdmarpc.tcp.idleStrategy=back-off:50us},
 * {@code -Drdmarpc.tcp.writeHighWaterMark=16M}).
 */
public final class TcpConfig {
    private static final SettingsTable<TcpConfig> SETTINGS = new SettingsTable<TcpConfig>("TcpConfig", "rdmarpc.tcp.")
            .addFrom(LoopSettings.settingsTable(), "ioThreads", TcpConfig::loop)
            .add("bufferPool", null, TcpConfig::bufferPool, TcpConfig::bufferPool)
            .add("threadNamePrefix", Function.identity(), TcpConfig::threadNamePrefix, TcpConfig::threadNamePrefix)
            .add("socketSendBuffer", SettingsTable::parseIntBytes, TcpConfig::socketSendBuffer, TcpConfig::socketSendBuffer)
            .add("socketReceiveBuffer", SettingsTable::parseIntBytes, TcpConfig::socketReceiveBuffer, TcpConfig::socketReceiveBuffer)
            .add("loopbackSocketSendBuffer", SettingsTable::parseIntBytes, TcpConfig::loopbackSocketSendBuffer,
                    TcpConfig::loopbackSocketSendBuffer)
            .add("writeHighWaterMark", SettingsTable::parseBytes, TcpConfig::writeHighWaterMark, TcpConfig::writeHighWaterMark)
            .addFrom(LoopSettings.settingsTable(), "tickInterval", TcpConfig::loop)
            .addFrom(LoopSettings.settingsTable(), "idleTickInterval", TcpConfig::loop)
            .addFrom(LoopSettings.settingsTable(), "idleStrategy", TcpConfig::loop)
            .addFrom(LoopSettings.settingsTable(), "ioThreadCpus", TcpConfig::loop)
            .add("frameReadTimeout", SettingsTable::parseDuration, TcpConfig::frameReadTimeout, TcpConfig::frameReadTimeout)
            .add("idleTimeout", SettingsTable::parseDuration, TcpConfig::idleTimeout, TcpConfig::idleTimeout)
            .add("pingInterval", SettingsTable::parseDuration, TcpConfig::pingInterval, TcpConfig::pingInterval)
            .add("pingTimeout", SettingsTable::parseDuration, TcpConfig::pingTimeout, TcpConfig::pingTimeout)
            .group("keepalive", TcpKeepalive.SETTINGS, TcpConfig::keepalive)
            .group("limits", ConnectionLimits.settingsTable(), TcpConfig::limits)
            .add("tls", null, TcpConfig::tls, TcpConfig::tls); // by code only: keys are not a property

    /** Default SO_SNDBUF of connections to a loopback address: 256 KiB. */
    public static final int DEFAULT_LOOPBACK_SOCKET_SEND_BUFFER = 256 * 1024;
    private BufferPool.Config bufferPool = new BufferPool.Config();
    private String threadNamePrefix = "rdmarpc-tcp";
    private int socketSendBuffer;
    private int socketReceiveBuffer;
    private int loopbackSocketSendBuffer = DEFAULT_LOOPBACK_SOCKET_SEND_BUFFER;
    private long writeHighWaterMark = SocketSettings.DEFAULT_WRITE_HIGH_WATER_MARK;
    private final LoopSettings loop = new LoopSettings("", Runtime.getRuntime().availableProcessors(), 1024);
    private Duration frameReadTimeout = Duration.ofSeconds(30);
    private Duration idleTimeout = Duration.ofMinutes(5);
    private Duration pingInterval = SocketSettings.DEFAULT_PING_INTERVAL;
    private Duration pingTimeout = SocketSettings.DEFAULT_PING_TIMEOUT;
    private final TcpKeepalive keepalive = new TcpKeepalive();
    private TlsConfig tls;
    private final ConnectionLimits limits = new ConnectionLimits();

    /** Creates a configuration with the defaults (the system properties' where set). */
    public TcpConfig() {
        SETTINGS.applySystemProperties(this);
    }

    /** @return the system properties that give this class its defaults */
    public static java.util.List<String> systemProperties() {
        return SETTINGS.properties();
    }

    /**
     * @param config the buffer pool's settings; default {@code new BufferPool.Config()}
     * @return this
     */
    public TcpConfig bufferPool(BufferPool.Config config) {
        this.bufferPool = Objects.requireNonNull(config, "config");
        return this;
    }

    /**
     * @param prefix name prefix of the event-loop threads; default "rdmarpc-tcp"
     * @return this
     */
    public TcpConfig threadNamePrefix(String prefix) {
        this.threadNamePrefix = Objects.requireNonNull(prefix, "prefix");
        return this;
    }

    /**
     * @param bytes SO_SNDBUF of every connection, or 0 for the system default (the default;
     *              see {@link #loopbackSocketSendBuffer} for loopback peers)
     * @return this
     */
    public TcpConfig socketSendBuffer(int bytes) {
        this.socketSendBuffer = bytes;
        return this;
    }

    /**
     * @param bytes SO_SNDBUF of connections whose peer is a loopback address (127.0.0.0/8, ::1)
     *              when {@link #socketSendBuffer} is 0; 0 leaves them to the kernel's autotuning
     *              too. Default 256 KiB: on loopback the round trip is tens of microseconds, so
     *              this bounds nothing, while an autotuned buffer of megabytes let a sender queue
     *              so much that, with client and server sharing the cores, the kernel counted
     *              thousands of (mostly spurious) retransmissions per second. Measured on a 2-vCPU
     *              machine (docs/performance-archive.md, 1b): retransmitted segments 30-50 x fewer, and
     *              256 KiB and 1 MiB echoes at 16 and 64 calls in flight 14-42 % faster, with
     *              4 KiB, 32 KiB and 8 MiB unchanged within noise.
     * @return this
     */
    public TcpConfig loopbackSocketSendBuffer(int bytes) {
        this.loopbackSocketSendBuffer = bytes;
        return this;
    }

    /** @return SO_SNDBUF for loopback peers, or 0 */
    public int loopbackSocketSendBuffer() {
        return loopbackSocketSendBuffer;
    }

    /**
     * @param bytes SO_RCVBUF, or 0 for the system default (the default)
     * @return this
     */
    public TcpConfig socketReceiveBuffer(int bytes) {
        this.socketReceiveBuffer = bytes;
        return this;
    }

    /**
     * @param bytes bytes of responses queued unwritten on one accepted (server) connection above
     *              which it stops reading requests until they drain to the mark; default 8 MiB.
     *              It also stops while half of its send queue's 256 entries are taken, whatever
     *              the bytes (a response sent from its request's buffer takes two). A connection holds at most this plus one frame of responses, one frame being
     *              reassembled and one receive chunk. Client connections never stop reading: their
     *              requests are bounded by the RPC client before they are queued.
     * @return this
     */
    public TcpConfig writeHighWaterMark(long bytes) {
        this.writeHighWaterMark = bytes;
        return this;
    }

    /**
     * Edits the event loops' settings in place: how many, on which CPUs, how they wait and tick (the
     * settings RDMA's loops have too, declared once by {@link LoopSettings}).
     *
     * @param settings what to change, e.g. {@code l -> l.ioThreads(2).idleStrategy(IdleStrategy.event())}
     * @return this
     */
    public TcpConfig loop(Consumer<LoopSettings> settings) {
        settings.accept(loop);
        return this;
    }

    /** @return the event loops' settings: this configuration's own */
    public LoopSettings loop() {
        return loop;
    }

    /**
     * @param timeout how long a frame may take to arrive once its first byte has: a peer that
     *                starts a frame and stalls (16 header bytes, then nothing) is refused (see
     *                {@link FrameHandler#onRefused}; a server says why before it closes) and its
     *                receive buffers go back to the pool. Default 30 s; {@link Duration#ZERO}
     *                turns it off. Measured on the I/O thread's tick, so it fires up to one
     *                {@link LoopSettings#tickInterval tickInterval} late, and costs nothing per frame. Time the connection
     *                itself does not read (a server whose responses back up) does not count. Raise
     *                it for very large frames over slow links: a 16 MiB frame at 1 MB/s takes 16 s.
     *                Client and server connections alike.
     * @return this
     */
    public TcpConfig frameReadTimeout(Duration timeout) {
        this.frameReadTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * @param timeout how long an accepted (server) connection may sit with no call in flight (no
     *                request being handled, no response waiting to be written, no frame half
     *                received) and no byte received before the server closes it, telling the client
     *                why ({@code SHUTTING_DOWN}, "idle for ..."). Default 5 minutes: it returns
     *                the connection's socket and receive chunk of a client that went away
     *                politely or leaked its connection, and keeps those of any client that calls
     *                at least that often. {@link Duration#ZERO} turns it off. Checked on the
     *                tick. Client connections are never closed for idleness (a user who keeps an
     *                {@code RpcClient} open expects it to work whenever called; a vanished server
     *                is keepalive's to notice, {@link #keepalive}), but an idle {@code RpcClient}
     *                is closed by its server after the server's idle timeout: its next call fails
     *                with {@code CONNECTION_CLOSED} and the server's reason, while an
     *                {@code RpcClientPool}'s channel reconnects. Raise it (or turn it off) on a
     *                server whose single-connection clients stay quiet longer.
     * @return this
     */
    public TcpConfig idleTimeout(Duration timeout) {
        this.idleTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * @param interval how long a client connection with calls waiting for responses may receive
     *                 nothing before it sends a ping (a 32-byte header the server's transport
     *                 answers at once, whatever its handlers are doing). Default 2 s;
     *                 {@link Duration#ZERO} turns pings off. Costs one 32-byte frame each way per
     *                 interval, only while calls wait in silence (a call that takes a minute to
     *                 answer: 30 pings); a connection with nothing awaited never pings (keepalive's
     *                 to watch, and the server's idle timeout is not kept from firing). Server
     *                 connections never ping; they answer.
     * @return this
     */
    public TcpConfig pingInterval(Duration interval) {
        this.pingInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    /**
     * @param timeout how long after its ping a client connection waiting for responses may go on
     *                receiving nothing, not a byte, before it gives the server up: the connection
     *                closes and every call on it fails with {@code CONNECTION_CLOSED} "no answer
     *                from the peer for N ms ...". Default 3 s: with the 2 s interval a server
     *                that vanished (its host off, a cable pulled, a network partition) fails the
     *                calls waiting on it within about 5 s, where TCP alone takes 25 s to minutes
     *                (keepalive probes start only on a connection with nothing unacknowledged;
     *                otherwise the kernel retransmits for about 15 minutes). A live server answers
     *                within a round trip even while its handlers are busy; raise this where its
     *                process may stall longer (a multi-second GC pause). Checked on the tick;
     *                when this side's own I/O thread was held up (a tick more than half this
     *                timeout late), the wait starts again from that tick. Beside an RDMA
     *                connection, any message the server sends over RDMA counts as an answer.
     * @return this
     */
    public TcpConfig pingTimeout(Duration timeout) {
        this.pingTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /** @return the silence before a client connection with calls waiting pings, zero when off */
    public Duration pingInterval() {
        return pingInterval;
    }

    /** @return the silence after a ping before a client connection gives up */
    public Duration pingTimeout() {
        return pingTimeout;
    }

    /**
     * Edits the TCP keepalive settings in place.
     *
     * @param settings what to change, e.g. {@code k -> k.idle(Duration.ofSeconds(30))}
     * @return this
     */
    public TcpConfig keepalive(Consumer<TcpKeepalive> settings) {
        settings.accept(keepalive);
        return this;
    }

    /** @return the keepalive settings: this configuration's own */
    public TcpKeepalive keepalive() {
        return keepalive;
    }

    /**
     * Edits the limits on accepted connections in place.
     *
     * @param settings what to change, e.g. {@code l -> l.maxConnectionsPerAddress(64)}
     * @return this
     */
    public TcpConfig limits(Consumer<ConnectionLimits> settings) {
        settings.accept(limits);
        return this;
    }

    /** @return the limits on accepted connections: this configuration's own */
    public ConnectionLimits limits() {
        return limits;
    }

    /**
     * Serves (or connects) over TLS with these keys and trust: every connection of the
     * transport, accepted and connected, starts with a TLS handshake, and frames flow only
     * after it. Default null: plain TCP.
     *
     * @param tls the keys, trust and rules, or null for plain TCP
     * @return this
     */
    public TcpConfig tls(TlsConfig tls) {
        this.tls = tls;
        return this;
    }

    /** @return the TLS settings, or null for plain TCP */
    public TlsConfig tls() {
        return tls;
    }

    /** @return the frame-read timeout, zero when off */
    public Duration frameReadTimeout() {
        return frameReadTimeout;
    }

    /** @return the idle timeout of server connections, zero when off */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** @return the buffer pool settings */
    public BufferPool.Config bufferPool() {
        return bufferPool;
    }

    /** @return the thread name prefix */
    public String threadNamePrefix() {
        return threadNamePrefix;
    }

    /** @return SO_SNDBUF or 0 */
    public int socketSendBuffer() {
        return socketSendBuffer;
    }

    /** @return SO_RCVBUF or 0 */
    public int socketReceiveBuffer() {
        return socketReceiveBuffer;
    }

    /** @return the write high-water mark */
    public long writeHighWaterMark() {
        return writeHighWaterMark;
    }

    /**
     * Validates the settings.
     *
     * @return this
     * @throws IllegalArgumentException naming the first bad setting
     */
    public TcpConfig conclude() {
        if (socketSendBuffer < 0 || socketReceiveBuffer < 0 || loopbackSocketSendBuffer < 0) {
            throw new IllegalArgumentException("socket buffer sizes must not be negative");
        }
        if (writeHighWaterMark < 1) {
            throw new IllegalArgumentException("writeHighWaterMark must be positive: " + writeHighWaterMark);
        }
        loop.check();
        if (pingInterval.isNegative() || pingTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("pingInterval must not be negative and pingTimeout must be at least 1 ms: "
                    + pingInterval + ", " + pingTimeout);
        }
        if (frameReadTimeout.isNegative() || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("frameReadTimeout and idleTimeout must not be negative: "
                    + frameReadTimeout + ", " + idleTimeout);
        }
        keepalive.check();
        limits.check();
        bufferPool.conclude();
        return this;
    }

    TcpConfig copy() {
        TcpConfig c = new TcpConfig();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
