package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.Transport;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
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
public final class RpcClient implements RpcChannel, AutoCloseable {
    private final Transport transport;
    private final boolean ownsTransport;
    /** The connection, whose calls this client's are. */
    private final RpcProvider.Client connection;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Observations observations = Observations.NONE;

    private RpcClient(Transport transport, boolean ownsTransport, RpcProvider.Client connection) {
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.connection = connection;
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
    public <Q, R> R call(Method<Q, R> method, Q request, CallOptions options) {
        return connection.call(method, request, options);
    }

    @Override
    public <Q, R> Reply<R> exchange(Method<Q, R> method, Q request, CallOptions options) {
        return connection.exchange(method, request, options);
    }

    @Override
    public <Q, R> CompletableFuture<R> callAsync(Method<Q, R> method, Q request, CallOptions options) {
        return connection.callAsync(method, request, options);
    }

    @Override
    public <Q, R> CompletableFuture<Reply<R>> exchangeAsync(Method<Q, R> method, Q request, CallOptions options) {
        return connection.exchangeAsync(method, request, options);
    }

    @Override
    public boolean send(Method<?, ?> method, MemorySegment payload, MemorySegment attachment, long timeoutNanos,
                        ResponseListener listener, long tag) {
        return connection.send(method, payload, attachment, timeoutNanos, listener, tag);
    }

    @Override
    public boolean send(Method<?, ?> method, MemorySegment payload, Metadata metadata, MemorySegment attachment,
                        long timeoutNanos, ResponseListener listener, long tag) {
        return connection.send(method, payload, metadata, attachment, timeoutNanos, listener, tag);
    }

    @Override
    public boolean sendInPlace(Method<?, ?> method, MemorySegment payload, ResponseListener listener, long tag) {
        return connection.sendInPlace(method, payload, listener, tag);
    }

    @Override
    public <Q, R> ClientStream<Q, R> openStream(Method<Q, R> method, CallOptions options) {
        return connection.openStream(method, options);
    }

    @Override
    public <Q, R> AsyncClientStream<Q, R> openAsyncStream(Method<Q, R> method, CallOptions options,
                                                          StreamListener<? super R> listener, Executor executor) {
        return connection.openAsyncStream(method, options, listener, executor);
    }

    /** @return the server's address */
    public InetSocketAddress remoteAddress() {
        return connection.remoteAddress();
    }

    /** @return true until the connection closes */
    public boolean isOpen() {
        return connection.isOpen();
    }

    /** @return calls awaiting a response now */
    public int outstanding() {
        return connection.outstanding();
    }

    /** @return the client's counters */
    public RpcMetrics metrics() {
        return connection.metrics();
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
        connection.close();
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
        return "RpcClient[" + connection + "]";
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
            RpcProvider.ClientSettings settings = settings();
            RpcClient client = makeOnTransport(Role.CLIENT,
                    (t, owns) -> new RpcClient(t, owns, provider().connect(t, settings, address)));
            return client.observedBy(observers());
        }
    }
}
