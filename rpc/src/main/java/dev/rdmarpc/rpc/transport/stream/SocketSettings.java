package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.time.Duration;

/**
 * What every {@link TcpConnection} of one transport reads from its settings, taken once when the
 * transport starts: the TCP transport's from its {@code TcpConfig}, the RDMA transport's (for its
 * hello connections) from its {@code RdmaConfig} and the defaults here.
 *
 * @param frameReadTimeoutNanos a started frame must arrive whole within this (0: never checked)
 * @param idleTimeoutNanos      an accepted connection that sends nothing for this long is closed (0: never)
 * @param pingIntervalNanos     a connecting side pings a silent server this often (0: no pings)
 * @param pingTimeoutNanos      and closes the connection when no answer came in this
 * @param idleTickNanos         the loop's idle tick interval (how long a quiet connection's ticks may be apart)
 * @param writeHighWaterMark    a server reads no more requests while more than this many response bytes wait
 * @param tls                   TLS of every connection, or null for plain TCP
 */
public record SocketSettings(long frameReadTimeoutNanos, long idleTimeoutNanos, long pingIntervalNanos,
                             long pingTimeoutNanos, long idleTickNanos, long writeHighWaterMark, TlsConfig tls) {
    /** How often a connecting side pings a silent server, unless set otherwise: 2 s. */
    public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(2);
    /** How long it waits for the answer, unless set otherwise: 3 s. */
    public static final Duration DEFAULT_PING_TIMEOUT = Duration.ofSeconds(3);
    /** The response bytes a server lets wait before it stops reading requests, unless set otherwise: 8 MiB. */
    public static final long DEFAULT_WRITE_HIGH_WATER_MARK = 8L << 20;
    /** TCP keepalive's idle time, probe interval (seconds) and probe count, unless set otherwise. */
    public static final int DEFAULT_KEEPALIVE_IDLE_SECONDS = 10;
    /** See {@link #DEFAULT_KEEPALIVE_IDLE_SECONDS}. */
    public static final int DEFAULT_KEEPALIVE_INTERVAL_SECONDS = 5;
    /** See {@link #DEFAULT_KEEPALIVE_IDLE_SECONDS}. */
    public static final int DEFAULT_KEEPALIVE_COUNT = 3;
}
