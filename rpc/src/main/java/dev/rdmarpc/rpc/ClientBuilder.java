package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.internal.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The settings of a connection to a server, shared by {@link RpcClient.Builder} (one connection)
 * and {@link RpcClientPool.Builder} (every connection of the pool), on top of the maximum frame
 * length and the transport of {@link RpcBuilder}. Not thread-safe.
 *
 * @param <B> the concrete builder
 */
public abstract sealed class ClientBuilder<B extends ClientBuilder<B>> extends RpcBuilder<B>
        permits RpcClient.Builder, RpcClientPool.Builder {
    /** The default of {@link #sendHighWaterMark(long)}: 8 MiB. */
    static final long SEND_HIGH_WATER_MARK = 8L << 20;
    /** The most of {@link #maxOutstanding(int)}: a call's slot is 16 bits of its request id. */
    static final int MAX_OUTSTANDING = 1 << 16;

    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration defaultTimeout = Duration.ofSeconds(30);
    private Duration defaultStreamTimeout = Duration.ofSeconds(30);
    private int maxOutstanding = 1024;
    private long sendHighWaterMark = SEND_HIGH_WATER_MARK;
    private final List<ClientInterceptor> interceptors = new ArrayList<>();
    private final List<Observability> observers = new ArrayList<>();

    ClientBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * How long opening a connection may take, TLS handshake and RDMA hello included; a call waiting
     * for a pool's connection waits no longer than its own deadline, whichever is first.
     *
     * @param timeout how long connecting may take; default 5 s
     * @return this
     */
    public B connectTimeout(Duration timeout) {
        this.connectTimeout = Objects.requireNonNull(timeout, "timeout");
        return self();
    }

    /**
     * @param timeout timeout of calls that do not set their own; default 30 s
     * @return this
     */
    public B defaultTimeout(Duration timeout) {
        this.defaultTimeout = Objects.requireNonNull(timeout, "timeout");
        return self();
    }

    /**
     * The deadline of a stream that sets no timeout of its own ({@link CallOptions#withTimeout}),
     * counted from when it is opened: at it, the stream ends with {@link Status#DEADLINE_EXCEEDED} on
     * both sides. Give a long-lived stream its own longer timeout, or raise this.
     *
     * @param timeout positive; default 30 s, as {@link #defaultTimeout}
     * @return this
     */
    public B defaultStreamTimeout(Duration timeout) {
        this.defaultStreamTimeout = Objects.requireNonNull(timeout, "timeout");
        return self();
    }

    /**
     * @param n most calls outstanding on one connection, in [1, 65536]; default 1024
     * @return this
     */
    public B maxOutstanding(int n) {
        this.maxOutstanding = n;
        return self();
    }

    /**
     * How many request bytes one connection keeps queued unsent before a new call must wait for room:
     * a blocking call ({@code call}, {@code exchange}) or a stream message waits until its deadline,
     * then fails with {@link Status#OVERLOADED}; an asynchronous call fails with OVERLOADED at once
     * ({@link RpcClient#send} returns false). At most this plus one frame waits unsent, however many
     * threads call (docs/protocol.md, "Flow control"). Unsent means not yet written to the socket
     * (TCP) or not yet completed by the device (RDMA). Raise it when many large asynchronous calls
     * share one connection and should queue rather than fail; lower it to hold less memory per
     * connection.
     *
     * @param bytes at least 1; default 8 MiB
     * @return this
     */
    public B sendHighWaterMark(long bytes) {
        this.sendHighWaterMark = bytes;
        return self();
    }

    /**
     * Adds an interceptor, run around every typed call after those added before it (see
     * {@link ClientInterceptor} for the order and threads).
     *
     * @param interceptor the interceptor
     * @return this
     */
    public B intercept(ClientInterceptor interceptor) {
        interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
        return self();
    }

    /**
     * Turns on metrics and traces: adds {@code observability}'s client interceptor here, in the order of
     * {@link #intercept} calls (make it the first), and once the client is connected or the pool built
     * registers it with {@code observability} ({@link Observability#observe(RpcClient)},
     * {@link Observability#observe(RpcClientPool)}: connections, buffer pool, and a pool's RDMA counters); the
     * client or pool closes that registration when it closes, before its transport. With the opentelemetry
     * module: {@code observability(RdmarpcTelemetry.create(openTelemetry))}.
     *
     * @param observability what observes the client or pool
     * @return this
     */
    public B observability(Observability observability) {
        Objects.requireNonNull(observability, "observability");
        intercept(observability.clientInterceptor());
        observers.add(observability);
        return self();
    }

    /** @return the observabilities added so far, in order */
    final List<Observability> observers() {
        return List.copyOf(observers);
    }

    /** Validates the settings of this class and {@link RpcBuilder}'s. */
    void validate() {
        if (maxOutstanding < 1 || maxOutstanding > MAX_OUTSTANDING) {
            throw new IllegalArgumentException("maxOutstanding must be in [1, " + MAX_OUTSTANDING + "]: "
                    + maxOutstanding);
        }
        if (sendHighWaterMark < 1) {
            throw new IllegalArgumentException("sendHighWaterMark must be positive: " + sendHighWaterMark);
        }
        Settings.checkPositive("connectTimeout", connectTimeout);
        Settings.checkPositive("defaultTimeout", defaultTimeout);
        Settings.checkPositive("defaultStreamTimeout", defaultStreamTimeout);
        checkedMaxFrameLength();
        checkedMaxMetadataBytes();
    }

    /**
     * @return the settings of each connection, validated (later changes to this builder do not reach
     *         them)
     */
    final RpcProvider.ClientSettings settings() {
        validate();
        return new RpcProvider.ClientSettings(maxOutstanding, checkedMaxFrameLength(), defaultTimeout.toNanos(),
                connectTimeout, checkedMaxMetadataBytes(), interceptors, checkedStreamWindowBytes(), sendHighWaterMark,
                defaultStreamTimeout.toNanos());
    }
}
