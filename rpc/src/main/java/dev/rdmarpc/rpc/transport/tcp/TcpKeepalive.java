package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.transport.stream.SocketSettings;
import dev.rdmarpc.rpc.settings.SettingsTable;
import java.io.IOException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Objects;
import jdk.net.ExtendedSocketOptions;

/**
 * TCP keepalive of every connection of a {@link TcpTransport}, accepted and connected alike: a group
 * of {@link TcpConfig}, edited through {@link TcpConfig#keepalive(java.util.function.Consumer)},
 * with defaults from {@code rdmarpc.tcp.keepalive.<setting>} ({@code -Drdmarpc.tcp.keepalive.idle=30s}).
 *
 * <p>SO_KEEPALIVE is always on. With the system's own timers (Linux: first probe after 2 hours) a
 * peer whose host vanished (powered off, cable pulled, a VM killed: nothing sends a FIN or RST) is
 * noticed hours late, and its connection holds its buffers meanwhile. The defaults here notice it
 * after {@code idle + count x interval} = 10 s + 3 x 5 s = 25 s of silence, well within a minute,
 * and cost one empty segment each way per {@code idle} on a connection that carries nothing (none on
 * one that does: probes start only after {@code idle} without traffic). Keepalive needs nothing from
 * the peer's software, only its kernel, so it tells a vanished host from a quiet client without
 * closing the latter (that is the idle timeout's choice, {@link TcpConfig#idleTimeout}).
 * It does not cover a peer that vanishes while this side has unacknowledged data in flight: then the
 * kernel's retransmission limit applies ({@code tcp_retries2}, about 15 minutes on Linux).
 *
 * <p>The three timers are set with {@link ExtendedSocketOptions} where the platform supports them
 * (Linux, macOS, Windows 10+); elsewhere the connection keeps plain SO_KEEPALIVE with the system's
 * timers (logged once at DEBUG). A value of 0 leaves that timer at the system's default.
 */
public final class TcpKeepalive {
    private static final System.Logger LOG = System.getLogger(TcpKeepalive.class.getName());
    /** Linux's upper bounds of TCP_KEEPIDLE and TCP_KEEPINTVL (seconds) and of TCP_KEEPCNT. */
    private static final int MAX_SECONDS = 32767;
    private static final int MAX_COUNT = 127;
    private static volatile boolean unsupportedLogged;

    static final SettingsTable<TcpKeepalive> SETTINGS = new SettingsTable<TcpKeepalive>("TcpKeepalive", "rdmarpc.tcp.keepalive.")
            .add("idle", SettingsTable::parseDuration, TcpKeepalive::idle, TcpKeepalive::idle)
            .add("interval", SettingsTable::parseDuration, TcpKeepalive::interval, TcpKeepalive::interval)
            .add("count", SettingsTable::parseInt, TcpKeepalive::count, TcpKeepalive::count);

    private Duration idle = Duration.ofSeconds(SocketSettings.DEFAULT_KEEPALIVE_IDLE_SECONDS);
    private Duration interval = Duration.ofSeconds(SocketSettings.DEFAULT_KEEPALIVE_INTERVAL_SECONDS);
    private int count = SocketSettings.DEFAULT_KEEPALIVE_COUNT;

    TcpKeepalive() {
    }

    /**
     * @param time how long a connection carries nothing before the first probe (TCP_KEEPIDLE), whole
     *             seconds, 0 for the system's default; default 10 s
     * @return this
     */
    public TcpKeepalive idle(Duration time) {
        this.idle = Objects.requireNonNull(time, "time");
        return this;
    }

    /**
     * @param time time between unanswered probes (TCP_KEEPINTVL), whole seconds, 0 for the system's
     *             default; default 5 s
     * @return this
     */
    public TcpKeepalive interval(Duration time) {
        this.interval = Objects.requireNonNull(time, "time");
        return this;
    }

    /**
     * @param probes unanswered probes after which the connection is dropped (TCP_KEEPCNT), in
     *               [1, 127], 0 for the system's default; default 3
     * @return this
     */
    public TcpKeepalive count(int probes) {
        this.count = probes;
        return this;
    }

    /** @return the time before the first probe */
    public Duration idle() {
        return idle;
    }

    /** @return the time between probes */
    public Duration interval() {
        return interval;
    }

    /** @return the probes before the connection is dropped */
    public int count() {
        return count;
    }

    void check() {
        checkSeconds("keepalive.idle", idle);
        checkSeconds("keepalive.interval", interval);
        if (count < 0 || count > MAX_COUNT) {
            throw new IllegalArgumentException("keepalive.count must be 0 or in [1, " + MAX_COUNT + "]: " + count);
        }
    }

    private static void checkSeconds(String name, Duration d) {
        if (d.isNegative() || d.toSeconds() > MAX_SECONDS || d.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException(name + " must be 0 or whole seconds up to " + MAX_SECONDS + " s: " + d);
        }
    }

    /** Turns keepalive on for {@code ch} and sets the timers the platform supports. */
    void apply(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        set(ch, ExtendedSocketOptions.TCP_KEEPIDLE, (int) idle.toSeconds());
        set(ch, ExtendedSocketOptions.TCP_KEEPINTERVAL, (int) interval.toSeconds());
        set(ch, ExtendedSocketOptions.TCP_KEEPCOUNT, count);
    }

    private static void set(SocketChannel ch, SocketOption<Integer> option, int value) throws IOException {
        if (value == 0) {
            return;
        }
        try {
            if (ch.supportedOptions().contains(option)) {
                ch.setOption(option, value);
                return;
            }
        } catch (UnsupportedOperationException e) {
            // as if not listed
        }
        if (!unsupportedLogged) {
            unsupportedLogged = true;
            LOG.log(System.Logger.Level.DEBUG, "{0} is not supported here: TCP keepalive keeps the system''s timers", option.name());
        }
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
