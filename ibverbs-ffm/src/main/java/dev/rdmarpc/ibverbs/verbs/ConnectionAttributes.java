package dev.rdmarpc.ibverbs.verbs;

import java.net.InetAddress;

/**
 * Everything the INIT, RTR and RTS transitions of a reliable queue pair take, with defaults that
 * work on InfiniBand and on routed RoCE. Fluent setters; {@link #validate()} checks ranges.
 *
 * <table>
 *   <caption>Attributes and defaults</caption>
 *   <tr><th>attribute</th><th>default</th><th>transition</th></tr>
 *   <tr><td>{@link #port}</td><td>1</td><td>INIT</td></tr>
 *   <tr><td>{@link #accessFlags} (remote access to this QP)</td><td>LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ</td><td>INIT</td></tr>
 *   <tr><td>{@link #pkeyIndex}</td><td>0</td><td>INIT</td></tr>
 *   <tr><td>{@link #remote} (QPN, PSN, GID, LID of the peer)</td><td>required</td><td>RTR</td></tr>
 *   <tr><td>{@link #pathMtu}</td><td>the port's active MTU</td><td>RTR</td></tr>
 *   <tr><td>{@link #sgidIndex} / {@link #localAddress}</td><td>required on RoCE: the explicit index wins,
 *       else the RoCE v2 GID of the local address</td><td>RTR</td></tr>
 *   <tr><td>{@link #hopLimit}</td><td>64 (1 would stop at the first router)</td><td>RTR</td></tr>
 *   <tr><td>{@link #trafficClass}, {@link #flowLabel}, {@link #serviceLevel}</td><td>0</td><td>RTR</td></tr>
 *   <tr><td>{@link #maxDestReadAtomic} (reads the peer may have outstanding here)</td><td>16, at most the device's</td><td>RTR</td></tr>
 *   <tr><td>{@link #minRnrTimer}</td><td>12 (0.64 ms)</td><td>RTR</td></tr>
 *   <tr><td>{@link #localPsn}</td><td>0</td><td>RTS</td></tr>
 *   <tr><td>{@link #timeout} (4.096 us * 2^t)</td><td>14 (67 ms)</td><td>RTS</td></tr>
 *   <tr><td>{@link #retryCount}</td><td>7</td><td>RTS</td></tr>
 *   <tr><td>{@link #rnrRetry} (7 = forever)</td><td>7</td><td>RTS</td></tr>
 *   <tr><td>{@link #maxReadAtomic} (reads this QP may have outstanding)</td><td>16, at most the device's</td><td>RTS</td></tr>
 * </table>
 *
 * <p>A plain mutable object: configure on one thread, then hand it over.
 */
public final class ConnectionAttributes {
    private int port = 1;
    private int accessFlags = Access.LOCAL_REMOTE_READ_WRITE;
    private int pkeyIndex;
    private QpEndpoint remote;
    private Mtu pathMtu;
    private int sgidIndex = -1;
    private InetAddress localAddress;
    private int hopLimit = 64;
    private int trafficClass;
    private int flowLabel;
    private int serviceLevel;
    private int maxDestReadAtomic = 16;
    private int minRnrTimer = 12;
    private int localPsn;
    private int timeout = 14;
    private int retryCount = 7;
    private int rnrRetry = 7;
    private int maxReadAtomic = 16;

    public ConnectionAttributes port(int port) {
        this.port = port;
        return this;
    }

    /** {@link Access} bits for remote operations on this queue pair. */
    public ConnectionAttributes accessFlags(int accessFlags) {
        this.accessFlags = accessFlags;
        return this;
    }

    public ConnectionAttributes pkeyIndex(int pkeyIndex) {
        this.pkeyIndex = pkeyIndex;
        return this;
    }

    /** The peer: its QPN, first PSN (our receive PSN), GID and LID. */
    public ConnectionAttributes remote(QpEndpoint remote) {
        this.remote = remote;
        return this;
    }

    /** The path MTU; {@code null} (default) takes the port's active MTU. */
    public ConnectionAttributes pathMtu(Mtu pathMtu) {
        this.pathMtu = pathMtu;
        return this;
    }

    /** The GID index to send from; overrides {@link #localAddress}. -1 (default): not set. */
    public ConnectionAttributes sgidIndex(int sgidIndex) {
        this.sgidIndex = sgidIndex;
        return this;
    }

    /** The local IP address whose RoCE v2 GID to send from (see {@link Context#gidFor}). */
    public ConnectionAttributes localAddress(InetAddress localAddress) {
        this.localAddress = localAddress;
        return this;
    }

    /** GRH hop limit (TTL of RoCE v2's IP header); default 64. */
    public ConnectionAttributes hopLimit(int hopLimit) {
        this.hopLimit = hopLimit;
        return this;
    }

    /** GRH traffic class (DSCP and ECN of RoCE v2's IP header); default 0. */
    public ConnectionAttributes trafficClass(int trafficClass) {
        this.trafficClass = trafficClass;
        return this;
    }

    public ConnectionAttributes flowLabel(int flowLabel) {
        this.flowLabel = flowLabel;
        return this;
    }

    public ConnectionAttributes serviceLevel(int serviceLevel) {
        this.serviceLevel = serviceLevel;
        return this;
    }

    /** RDMA READs/atomics the peer may have outstanding on this QP (responder resources). */
    public ConnectionAttributes maxDestReadAtomic(int n) {
        this.maxDestReadAtomic = n;
        return this;
    }

    /**
     * How long the peer must wait before retrying a SEND that found no receive posted: code 0 to 31
     * of the IB spec (1 = 0.01 ms, 12 = 0.64 ms, 0 = 655 ms).
     */
    public ConnectionAttributes minRnrTimer(int code) {
        this.minRnrTimer = code;
        return this;
    }

    /** The first PSN this side sends (the peer's receive PSN); 24 bits. */
    public ConnectionAttributes localPsn(int psn) {
        this.localPsn = psn;
        return this;
    }

    /** Local ACK timeout, 4.096 us * 2^timeout (0 = infinite); default 14. */
    public ConnectionAttributes timeout(int timeout) {
        this.timeout = timeout;
        return this;
    }

    /** Retries after a timeout, 0 to 7; default 7. */
    public ConnectionAttributes retryCount(int retryCount) {
        this.retryCount = retryCount;
        return this;
    }

    /** Retries after receiver-not-ready NAKs, 0 to 7 (7 = forever); default 7. */
    public ConnectionAttributes rnrRetry(int rnrRetry) {
        this.rnrRetry = rnrRetry;
        return this;
    }

    /** RDMA READs/atomics this QP may have outstanding (initiator depth). */
    public ConnectionAttributes maxReadAtomic(int n) {
        this.maxReadAtomic = n;
        return this;
    }

    public int port() {
        return port;
    }

    public int accessFlags() {
        return accessFlags;
    }

    public int pkeyIndex() {
        return pkeyIndex;
    }

    public QpEndpoint remote() {
        return remote;
    }

    public Mtu pathMtu() {
        return pathMtu;
    }

    public int sgidIndex() {
        return sgidIndex;
    }

    public InetAddress localAddress() {
        return localAddress;
    }

    public int hopLimit() {
        return hopLimit;
    }

    public int trafficClass() {
        return trafficClass;
    }

    public int flowLabel() {
        return flowLabel;
    }

    public int serviceLevel() {
        return serviceLevel;
    }

    public int maxDestReadAtomic() {
        return maxDestReadAtomic;
    }

    public int minRnrTimer() {
        return minRnrTimer;
    }

    public int localPsn() {
        return localPsn;
    }

    public int timeout() {
        return timeout;
    }

    public int retryCount() {
        return retryCount;
    }

    public int rnrRetry() {
        return rnrRetry;
    }

    public int maxReadAtomic() {
        return maxReadAtomic;
    }

    /**
     * Checks every range.
     *
     * @throws IllegalArgumentException naming the first attribute out of range
     */
    public ConnectionAttributes validate() {
        range("port", port, 1, 255);
        range("pkeyIndex", pkeyIndex, 0, 0xFFFF);
        range("hopLimit", hopLimit, 1, 255);
        range("trafficClass", trafficClass, 0, 255);
        range("flowLabel", flowLabel, 0, 0xFFFFF);
        range("serviceLevel", serviceLevel, 0, 15);
        range("maxDestReadAtomic", maxDestReadAtomic, 0, 255);
        range("minRnrTimer", minRnrTimer, 0, 31);
        range("localPsn", localPsn, 0, 0xFFFFFF);
        range("timeout", timeout, 0, 31);
        range("retryCount", retryCount, 0, 7);
        range("rnrRetry", rnrRetry, 0, 7);
        range("maxReadAtomic", maxReadAtomic, 0, 255);
        range("sgidIndex", sgidIndex, -1, 0xFFFF);
        Access.of(accessFlags);
        return this;
    }

    private static void range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be " + min + " to " + max + ", not " + value);
        }
    }
}
