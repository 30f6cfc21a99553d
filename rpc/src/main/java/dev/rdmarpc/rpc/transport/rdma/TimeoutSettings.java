package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Connection set-up, retransmission, idle and frame timeouts ({@code rdmarpc.rdma.timeouts.*}).
 * Held by an {@link RdmaConfig}, edited through {@link RdmaConfig#timeouts(Consumer)}.
 */
public final class TimeoutSettings {
    static final SettingsTable<TimeoutSettings> SETTINGS = new SettingsTable<TimeoutSettings>("Timeouts", "rdmarpc.rdma.timeouts.")
            .add("handshake", SettingsTable::parseDuration, TimeoutSettings::handshake, TimeoutSettings::handshake)
            .add("ackTimeout", SettingsTable::parseInt, TimeoutSettings::ackTimeout, TimeoutSettings::ackTimeout)
            .add("idle", SettingsTable::parseDuration, TimeoutSettings::idle, TimeoutSettings::idle)
            .add("frameRead", SettingsTable::parseDuration, TimeoutSettings::frameRead, TimeoutSettings::frameRead);

    private Duration handshake = RdmaConfig.DEFAULT_HANDSHAKE_TIMEOUT;
    private int ackTimeout = RdmaConfig.DEFAULT_ACK_TIMEOUT;
    private Duration idle = RdmaConfig.DEFAULT_IDLE_TIMEOUT;
    private Duration frameRead = RdmaConfig.DEFAULT_FRAME_READ_TIMEOUT;

    TimeoutSettings() {
    }

    /**
     * @param timeout how long the RDMA hello exchange may take after the TCP connection is up;
     *                default 5 s
     * @return this
     */
    public TimeoutSettings handshake(Duration timeout) {
        this.handshake = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * @param code the queue pairs' local ACK timeout, 4.096 us x 2^code before unacknowledged
     *             packets are sent again (7 times, then the connection fails), in [1, 31]; default
     *             14 (67 ms). Raise it where acknowledgements are slow (software RDMA on a loaded
     *             or emulated CPU).
     * @return this
     */
    public TimeoutSettings ackTimeout(int code) {
        this.ackTimeout = code;
        return this;
    }

    /**
     * @param timeout how long an accepted (server) connection may sit with no call in flight (no
     *                request being handled, nothing queued or in flight to the client, no frame half
     *                received or being read) and no message received before the server closes it,
     *                telling the client why (a connection-level {@code SHUTTING_DOWN}, "closed after N
     *                ms idle ...") and giving back its queue pair and receive buffers. It counts from
     *                the moment the connection is set up, so a client that completes its hello and
     *                then sends nothing is closed after it too. It also applies to the TCP connection
     *                a client opens before its hello: one that sends no first frame is closed after
     *                it. Default 5 minutes, the value and meaning of
     *                {@code TcpConfig.idleTimeout}; {@link Duration#ZERO} turns it off.
     *                Checked on the I/O thread's tick (an idle thread ticks every
     *                {@link dev.rdmarpc.rpc.transport.LoopSettings#idleTickInterval}, 250 ms, so it fires up to that late). Client
     *                connections are never closed for idleness: an idle {@code RpcClient} is closed by
     *                its server, its next call failing with {@code CONNECTION_CLOSED} and the server's
     *                reason, while an {@code RpcClientPool}'s channel reconnects.
     * @return this
     */
    public TimeoutSettings idle(Duration timeout) {
        this.idle = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * @param timeout how long a frame larger than a receive buffer (sent as several messages) may
     *                take to arrive once its first message has: a peer that stops part way is refused
     *                (a server says why, a connection-level {@code PROTOCOL_ERROR} "frame incomplete
     *                after N ms ..."), its connection closed, and its queue pair, receive and
     *                reassembly buffers and credits given back. Also the time a client's hello may
     *                take once its first byte arrived on the TCP connection. Client and server
     *                connections alike. Default 30 s, the value and meaning of
     *                {@code TcpConfig.frameReadTimeout}; {@link Duration#ZERO} turns it
     *                off. Measured on the tick; time this side does not read (a server whose
     *                responses back up, a frame waiting for its address's share) does not count.
     *                Raise it for very large frames over slow links.
     * @return this
     */
    public TimeoutSettings frameRead(Duration timeout) {
        this.frameRead = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /** @return the idle timeout of accepted connections (zero: off) */
    public Duration idle() {
        return idle;
    }

    /** @return the most time a frame may take once it started arriving (zero: off) */
    public Duration frameRead() {
        return frameRead;
    }

    /** @return the handshake timeout */
    public Duration handshake() {
        return handshake;
    }

    /** @return the local ACK timeout code */
    public int ackTimeout() {
        return ackTimeout;
    }

    void check() {
        if (handshake.isNegative() || handshake.isZero()) {
            throw new IllegalArgumentException("timeouts.handshake must be positive: " + handshake);
        }
        if (ackTimeout < 1 || ackTimeout > 31) {
            throw new IllegalArgumentException("timeouts.ackTimeout must be in [1, 31]: " + ackTimeout);
        }
        if (idle.isNegative()) {
            throw new IllegalArgumentException("timeouts.idle must not be negative: " + idle);
        }
        if (frameRead.isNegative()) {
            throw new IllegalArgumentException("timeouts.frameRead must not be negative: " + frameRead);
        }
    }

    /** @return an independent copy */
    public TimeoutSettings copy() {
        TimeoutSettings c = new TimeoutSettings();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
