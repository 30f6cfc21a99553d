package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.settings.SettingsTable;

/**
 * How many connections a server accepts: in all, and from one remote address; and how much of the
 * large receive buffers one address may hold. A group of {@code TcpConfig}, edited through
 * {@code TcpConfig.limits(Consumer)}, with defaults from
 * {@code rdmarpc.tcp.limits.<setting>} ({@code -Drdmarpc.tcp.limits.maxConnectionsPerAddress=64}); and
 * of {@code RdmaConfig} ({@code rdmarpc.rdma.limits.<setting>}), where they count the TCP connections
 * every RDMA connection starts with (and plain TCP clients of an RDMA server).
 *
 * <p>A connection over a limit is accepted, told why and closed: the client's calls fail with
 * {@code RESOURCE_EXHAUSTED} "connection limit: ...", and its socket and receive chunk go back at
 * once. Only while more refused connections than {@link #maxConnectionsPerAddress} are still waiting
 * to be told (a peer opening connections faster than it reads) are further ones closed without a word.
 * Connections the transport opens itself (clients) are not counted.
 *
 * <p>What each limit protects: every accepted connection holds a socket (a file descriptor) and,
 * while it has bytes half received, a receive chunk of the buffer pool (64 KiB by default); the
 * per-address limit keeps one host from taking them all (issue 15: 8,200 connections that each sent
 * one byte took every chunk of a default pool), the total keeps the server within its file
 * descriptors. Peers behind one NAT share an address: raise the per-address limit for them.
 */
public final class ConnectionLimits {
    private static final SettingsTable<ConnectionLimits> SETTINGS = new SettingsTable<ConnectionLimits>("ConnectionLimits",
            "rdmarpc.tcp.limits.")
            .add("maxConnections", SettingsTable::parseInt, ConnectionLimits::maxConnections, ConnectionLimits::maxConnections)
            .add("maxConnectionsPerAddress", SettingsTable::parseInt, ConnectionLimits::maxConnectionsPerAddress,
                    ConnectionLimits::maxConnectionsPerAddress)
            .add("maxFrameBytesPerAddress", SettingsTable::parseBytes, ConnectionLimits::maxFrameBytesPerAddress,
                    ConnectionLimits::maxFrameBytesPerAddress);

    private int maxConnections = 4096;
    private int maxConnectionsPerAddress = 512;
    private long maxFrameBytesPerAddress = 128L << 20;

    /** Creates limits with the built-in defaults (no system properties: a configuration holding them applies those). */
    public ConnectionLimits() {
    }

    /**
     * @return the table of these settings, for a configuration class of this module that holds them
     *         as a group of its own
     */
    public static SettingsTable<ConnectionLimits> settingsTable() {
        return SETTINGS;
    }

    /**
     * @param n most accepted connections open at once, at least 1; default 4096 (a process's file
     *          descriptor limit is often 1024 soft and 4096 or more hard: raise {@code ulimit -n} with it)
     * @return this
     */
    public ConnectionLimits maxConnections(int n) {
        this.maxConnections = n;
        return this;
    }

    /**
     * @param n most accepted connections open at once from one remote IP address, at least 1;
     *          default 512 (an {@code RpcClientPool} opens a handful; 512 leaves room for many client
     *          processes on one host, while one host alone can take at most an eighth of the default total)
     * @return this
     */
    public ConnectionLimits maxConnectionsPerAddress(int n) {
        this.maxConnectionsPerAddress = n;
        return this;
    }

    /**
     * @param bytes most bytes that the accepted connections from one remote address may claim for
     *              large frames they are receiving (frames longer than a receive chunk, each counted
     *              at its declared length and an eighth, the most the pool's buffer for it can come
     *              to; the buffer itself grows with the bytes that arrived); default 128 MiB, a
     *              quarter of the default large-buffer budget (8 frames of 16 MiB at once). A frame
     *              over it is not refused: its connection stops reading (RDMA: stops handling its
     *              messages, so the peer's credits run out), holding the frame's first chunk, until
     *              the address's other frames arrive whole (checked every tick), so one peer that
     *              starts many large frames and stalls holds this much and no more. An address that
     *              holds nothing may always start one frame.
     * @return this
     */
    public ConnectionLimits maxFrameBytesPerAddress(long bytes) {
        this.maxFrameBytesPerAddress = bytes;
        return this;
    }

    /** @return the most bytes of large frames one address may be receiving at once */
    public long maxFrameBytesPerAddress() {
        return maxFrameBytesPerAddress;
    }

    /** @return the most accepted connections open at once */
    public int maxConnections() {
        return maxConnections;
    }

    /** @return the most accepted connections open at once from one address */
    public int maxConnectionsPerAddress() {
        return maxConnectionsPerAddress;
    }

    /**
     * Validates the limits (the configuration holding them calls it as it is concluded).
     *
     * @throws IllegalArgumentException naming the first bad limit
     */
    public void check() {
        if (maxConnections < 1) {
            throw new IllegalArgumentException("limits.maxConnections must be at least 1: " + maxConnections);
        }
        if (maxFrameBytesPerAddress < 1) {
            throw new IllegalArgumentException("limits.maxFrameBytesPerAddress must be positive: " + maxFrameBytesPerAddress);
        }
        if (maxConnectionsPerAddress < 1) {
            throw new IllegalArgumentException("limits.maxConnectionsPerAddress must be at least 1: " + maxConnectionsPerAddress);
        }
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
