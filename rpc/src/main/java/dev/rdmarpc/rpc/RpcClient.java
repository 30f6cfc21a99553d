package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.core.client.ClientCore;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client: one connection to one server, multiplexing many outstanding calls matched by request
 * id and answered in any order. The calls are {@link RpcChannel}'s.
 * {@snippet :
 * try (RpcClient client = RpcClient.connect(server.address())) {
 *     String r = client.call(ECHO, "hello");                       // blocking; cheap on virtual threads
 *     CompletableFuture<String> f = client.callAsync(ECHO, "hello");
 * }
 * }
 *
 * <p>Backpressure is {@link RpcChannel}'s, with {@link Builder#maxOutstanding} calls outstanding
 * at most.
 *
 * <p>Failure: one connection, never reconnected. When it closes, every pending call fails promptly
 * with {@link Status#CONNECTION_CLOSED}, and so does every later call (its message says so), so the
 * client is done with. Where the connection may drop (a server that restarts, a network that cuts
 * idle connections), use an {@link RpcClientPool} instead ({@code maxConnectionsPerEndpoint(1)} for
 * a single connection): its channel reconnects on the next call.
 *
 * <p>Thread-safe; the creator closes it.
 */
public final class RpcClient extends AbstractChannel implements AutoCloseable {
    private final Transport transport;
    private final boolean ownsTransport;
    private final ClientCore core;
    private final Counters metrics;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final long defaultStreamTimeoutNanos;
    private volatile Observations observations = Observations.NONE;

    private RpcClient(Transport transport, boolean ownsTransport, ClientCore core, Counters metrics,
                      long defaultStreamTimeoutNanos) {
        this.defaultStreamTimeoutNanos = defaultStreamTimeoutNanos;
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.core = core;
        this.metrics = metrics;
    }

    /**
     * Connects with the default settings.
     *
     * @param address the server's address
     * @return a connected client, owned by the caller
     * @throws RpcException {@link Status#UNAVAILABLE} when the server cannot be reached
     */
    public static RpcClient connect(InetSocketAddress address) {
        return builder().address(address).connect();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    ClientCore pick(long deadline) {
        return core;
    }

    @Override
    ClientCore pickNow() {
        return core;
    }

    /** A call on the closed connection: says that this client does not reconnect, and what does. */
    @Override
    ClientCore retry(ClientCore failed, RpcException error, int attempt, long deadline, boolean mayWait) {
        if (error.status() == Status.CONNECTION_CLOSED) {
            throw new RpcException(Status.CONNECTION_CLOSED, error.getMessage() + " (an RpcClient is one connection and"
                    + " never reconnects: use a new client, or an RpcClientPool, whose channel reconnects)", error)
                    .withMetadata(error.metadata());
        }
        throw error;
    }

    @Override
    long defaultTimeoutNanos() {
        return core.defaultTimeoutNanos();
    }

    @Override
    long defaultStreamTimeoutNanos() {
        return defaultStreamTimeoutNanos;
    }

    @Override
    ClientInterceptor[] interceptors() {
        return core.interceptors();
    }

    /** @return the server's address */
    public InetSocketAddress remoteAddress() {
        return core.remoteAddress();
    }

    /** @return true until the connection closes */
    public boolean isOpen() {
        return core.isOpen();
    }

    /** @return calls awaiting a response now */
    public int outstanding() {
        return core.outstanding();
    }

    /** @return the client's counters */
    public RpcMetrics metrics() {
        return metrics;
    }

    /** @return the buffer pool of the client's transport */
    public BufferPool bufferPool() {
        return transport.bufferPool();
    }

    /**
     * Closes the connection; pending calls fail with {@link Status#CONNECTION_CLOSED}. Closes the
     * transport too when the client created it. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        core.close();
        observations.close();
        if (ownsTransport) {
            transport.close();
        }
    }

    /** Registers this connected client with {@code observers}; when one fails, closes the client and rethrows. */
    private RpcClient observedBy(List<Observability> observers) {
        observations = Observations.register(observers, o -> o.observe(this), this::close);
        return this;
    }

    @Override
    public String toString() {
        return "RpcClient[" + core.connection() + "]";
    }

    /**
     * Settings of a client: the server's {@link #address}, those of every connection
     * ({@link ClientBuilder}) and the transport ({@link RpcBuilder}); {@link #connect()} validates
     * them and connects. Not thread-safe.
     */
    public static final class Builder extends ClientBuilder<Builder> {
        private InetSocketAddress address;

        private Builder() {
        }

        /**
         * @param address the server's address (required)
         * @return this
         */
        public Builder address(InetSocketAddress address) {
            this.address = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * Validates the settings and connects.
         *
         * @return the connected client, owned by the caller
         * @throws RpcException             {@link Status#UNAVAILABLE} when the server cannot be reached
         * @throws IllegalArgumentException for an invalid setting
         */
        public RpcClient connect() {
            if (address == null) {
                throw new IllegalArgumentException("address is required");
            }
            validate();
            RpcClient client = makeOnTransport(Role.CLIENT, (t, owns) -> {
                Counters metrics = new Counters();
                ClientBuilder.Connector connector = connector(t, metrics);
                ClientCore core = connector.connect(address);
                return new RpcClient(t, owns, core, metrics, connector.defaultStreamTimeoutNanos());
            });
            return client.observedBy(observers());
        }
    }
}
