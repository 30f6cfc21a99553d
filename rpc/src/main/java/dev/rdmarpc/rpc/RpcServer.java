package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.internal.Settings;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.Transport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An RPC server: a set of registered methods served on one listening address.
 * {@snippet :
 * static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
 *
 * RpcServer server = RpcServer.builder()
 *         .bind(new InetSocketAddress("127.0.0.1", 0))
 *         .register(ECHO, (ctx, req) -> req)           // inline on the I/O thread
 *         .registerBlocking(SLOW, (ctx, req) -> slow(req)) // on a virtual thread
 *         .start();
 * }
 *
 * <p>Threads: the transport's I/O threads (a TCP transport the server creates has one per core
 * unless {@code tcp(cfg -> cfg.loop(l -> l.ioThreads(n)))} says otherwise) read, decode, run inline handlers and
 * write; blocking handlers run on virtual threads. Unknown methods and
 * throwing handlers are answered with error responses; bytes that break the protocol close only the
 * offending connection (logged), everyone else keeps being served.
 *
 * <p>Ownership and shutdown: the creator closes the server. {@link #shutdown(Duration)} stops
 * accepting, answers new requests with {@link Status#SHUTTING_DOWN}, waits for calls in flight to
 * finish and their responses to be written, then closes the connections and (when the server created
 * it) the transport. Thread-safe.
 */
public final class RpcServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcServer.class.getName());

    private final Transport transport;
    private final boolean ownsTransport;
    /** The server's calls. */
    private final RpcProvider.Server core;
    private final ServerEndpoint endpoint;
    private final Duration drainTimeout;
    private final ServerHealth health;
    private final Object shutdownLock = new Object();
    private volatile boolean running = true;
    private Boolean drained;
    private volatile Observations observations = Observations.NONE;

    private RpcServer(Transport transport, boolean ownsTransport, RpcProvider.Server core, ServerEndpoint endpoint,
                      Duration drainTimeout, ServerHealth health) {
        this.health = health;
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.core = core;
        this.endpoint = endpoint;
        this.drainTimeout = drainTimeout;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the bound address, with the real port when port 0 was asked for */
    public InetSocketAddress address() {
        return endpoint.address();
    }

    /** @return the server's counters */
    public RpcMetrics metrics() {
        return core.metrics();
    }

    /** @return the buffer pool of the server's transport (its counters, its high-water mark) */
    public BufferPool bufferPool() {
        return transport.bufferPool();
    }

    /**
     * @return the server's transport (its name, its own counters: an RDMA transport's
     *         {@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#metrics()}); owned by the server when it
     *         created it, closed with it then
     */
    public Transport transport() {
        return transport;
    }

    /**
     * What the server answers to {@link Health#CHECK}: every server registers the health method
     * ({@link Health#METHOD_NAME}) itself; {@code ""} and each service it has methods of start
     * {@link Health.ServingStatus#SERVING}, and all are NOT_SERVING once shutdown starts.
     *
     * @return the server's health, which the application may set per service
     */
    public ServerHealth health() {
        return health;
    }

    /** @return true until shutdown starts */
    public boolean isRunning() {
        return running;
    }

    /**
     * Graceful shutdown: stop accepting, refuse new requests with {@link Status#SHUTTING_DOWN}, wait up
     * to {@code drainTimeout} for calls in flight to finish and be written, then close everything.
     * Idempotent; concurrent callers wait for the first.
     *
     * @param drainTimeout how long to wait for calls in flight
     * @return true when every call in flight finished in time
     */
    public boolean shutdown(Duration drainTimeout) {
        synchronized (shutdownLock) {
            if (drained != null) {
                return drained;
            }
            running = false;
            health.shuttingDown();
            core.beginShutdown();
            endpoint.close();
            boolean ok = core.awaitDrained(drainTimeout.toNanos());
            if (!ok) {
                LOG.log(System.Logger.Level.WARNING, "RPC server on {0}: calls still in flight after {1}; closing anyway",
                        endpoint.address(), drainTimeout);
            }
            core.closeConnections();
            observations.close();
            if (ownsTransport) {
                transport.close();
            }
            LOG.log(System.Logger.Level.INFO, "RPC server on {0} stopped", endpoint.address());
            drained = ok;
            return ok;
        }
    }

    /** Registers this started server with {@code observers}; when one fails, closes the server and rethrows. */
    private RpcServer observedBy(List<Observability> observers) {
        observations = Observations.register(observers, o -> o.observe(this), this::close);
        return this;
    }

    /** {@link #shutdown(Duration)} with the builder's {@link Builder#drainTimeout}. */
    @Override
    public void close() {
        shutdown(drainTimeout);
    }

    @Override
    public String toString() {
        return "RpcServer[" + endpoint.address() + ", " + transport.name() + (running ? "" : ", stopped") + "]";
    }

    /**
     * Settings and methods of a server, with the transport and maximum frame length of
     * {@link RpcBuilder}; {@link #start()} validates them and starts serving. Not thread-safe; use
     * one builder per server.
     */
    public static final class Builder extends RpcBuilder<Builder> {
        private InetSocketAddress bind = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        private int maxInFlight = 10_000;
        private Duration drainTimeout = Duration.ofSeconds(5);
        /** The registered methods by id, in the order registered. */
        private final Map<Integer, RpcProvider.Registration> methods = new LinkedHashMap<>();
        private final List<ServerInterceptor> interceptors = new ArrayList<>();
        private final List<Observability> observers = new ArrayList<>();
        /** The health of the server this builder started last, which its health method answers from. */
        private volatile ServerHealth lastHealth;

        private Builder() {
        }

        /**
         * @param address where to listen; default 127.0.0.1 on a free port
         * @return this
         */
        public Builder bind(InetSocketAddress address) {
            this.bind = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param n most held calls in flight in the whole server: blocking and asynchronous handlers'
         *          calls and open streams together (inline and raw calls, answered on the I/O thread,
         *          do not count); more are answered with {@link Status#OVERLOADED}. Default 10,000.
         * @return this
         */
        public Builder maxInFlight(int n) {
            this.maxInFlight = n;
            return this;
        }

        /**
         * @param timeout how long {@link RpcServer#close()} waits for calls in flight; default 5 s
         * @return this
         */
        public Builder drainTimeout(Duration timeout) {
            this.drainTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Registers a non-blocking handler: it runs inline on the I/O thread.
         *
         * @param method  the method
         * @param handler its implementation; must not block
         * @param <Q>     request type
         * @param <R>     response type
         * @return this
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        public <Q, R> Builder register(Method<Q, R> method, Handler<Q, R> handler) {
            return add(method, RpcProvider.Registration.Kind.INLINE, handler);
        }

        /**
         * Registers a blocking handler: each call runs on a new virtual thread.
         *
         * @param method  the method
         * @param handler its implementation; may block
         * @param <Q>     request type
         * @param <R>     response type
         * @return this
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        public <Q, R> Builder registerBlocking(Method<Q, R> method, Handler<Q, R> handler) {
            return add(method, RpcProvider.Registration.Kind.BLOCKING, handler);
        }

        /**
         * Registers a zero-allocation raw handler: it runs inline on the I/O thread over the received
         * bytes. The method's codecs are not used.
         *
         * @param method  the method (usually {@link Method#raw})
         * @param handler its implementation; must not block
         * @return this
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        public Builder registerRaw(Method<?, ?> method, RawHandler handler) {
            return add(method, RpcProvider.Registration.Kind.RAW, handler);
        }

        /**
         * Registers an asynchronous handler: it runs on the I/O thread (and must not block there) and
         * returns a future; the response goes out when the future completes, from whichever thread
         * completes it. A cancel or the call's deadline cancels the future (see {@link AsyncHandler}).
         *
         * @param method  the method
         * @param handler its implementation; must not block
         * @param <Q>     request type
         * @param <R>     response type
         * @return this
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        public <Q, R> Builder registerAsync(Method<Q, R> method, AsyncHandler<Q, R> handler) {
            return add(method, RpcProvider.Registration.Kind.ASYNC, handler);
        }

        /**
         * Registers a streaming method: each stream runs {@code handler} on a new virtual thread, which
         * reads and writes the stream's messages (see {@link ServerStream}) and ends it by returning or
         * throwing; an {@link AsyncStreamHandler} instead is called on the connection's I/O thread and
         * gets each stream's messages through the {@link StreamListener} it returns, with no thread per
         * stream (see {@link AsyncServerStream}). Server streaming, client streaming and bidirectional calls are all this one kind:
         * what the handler reads and writes makes the shape. A client must open it with
         * {@code openStream}; a unary call of it is answered PROTOCOL_ERROR, as is a stream opened
         * on a unary method. Interceptors run around it as around a blocking call.
         *
         * @param method  the method: its request codec for the client's messages, its response codec
         *                for the server's
         * @param handler its implementation; may block, unless it is an {@link AsyncStreamHandler}
         * @param <Q>     request message type
         * @param <R>     response message type
         * @return this
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        public <Q, R> Builder registerStream(Method<Q, R> method, StreamHandler<Q, R> handler) {
            return add(method, RpcProvider.Registration.Kind.STREAM, handler);
        }

        /**
         * @throws IllegalArgumentException when a method with the same id is already registered
         */
        private Builder add(Method<?, ?> method, RpcProvider.Registration.Kind kind, Object handler) {
            Objects.requireNonNull(method, "method");
            RpcProvider.Registration r = new RpcProvider.Registration(method, kind, Objects.requireNonNull(handler, "handler"));
            RpcProvider.Registration old = methods.putIfAbsent(method.id(), r);
            if (old != null) {
                throw new IllegalArgumentException(old.method().name().equals(method.name())
                        ? "method " + method.name() + " is already registered"
                        : "methods " + old.method().name() + " and " + method.name() + " have the same id 0x"
                          + Integer.toHexString(method.id()) + "; rename one");
            }
            return this;
        }

        /**
         * Adds an interceptor, run around every call after those added before it (see
         * {@link ServerInterceptor} for the order and threads).
         *
         * @param interceptor the interceptor
         * @return this
         */
        public Builder intercept(ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * Turns on metrics and traces: adds {@code observability}'s server interceptor here, in the order of
         * {@link #intercept} calls (make it the first), and once the server is started registers the server with
         * it ({@link Observability#observe(RpcServer)}: connections, buffer pool, RDMA counters); the server
         * closes that registration when it shuts down, before its transport. With the opentelemetry module:
         * {@code observability(RdmarpcTelemetry.create(openTelemetry))}.
         *
         * @param observability what observes the server
         * @return this
         */
        public Builder observability(Observability observability) {
            Objects.requireNonNull(observability, "observability");
            intercept(observability.serverInterceptor());
            observers.add(observability);
            return this;
        }

        /**
         * Registers {@link Health#CHECK} (once per builder), answered by the health of the services registered
         * so far.
         */
        private ServerHealth health() {
            java.util.Set<String> services = new java.util.LinkedHashSet<>();
            for (RpcProvider.Registration e : methods.values()) {
                if (e.method() == Health.CHECK) {
                    continue; // registered by an earlier start() of this builder
                }
                if (e.method().name().equals(Health.METHOD_NAME)) {
                    throw new IllegalArgumentException(Health.METHOD_NAME + " is the server's own health method;"
                            + " set what it answers with RpcServer.health()");
                }
                services.add(Health.serviceOf(e.method().name()));
            }
            services.remove("");
            ServerHealth health = new ServerHealth(services);
            if (methods.values().stream().noneMatch(e -> e.method() == Health.CHECK)) {
                register(Health.CHECK, (ctx, service) -> lastHealth.check(service));
            }
            lastHealth = health;
            return health;
        }

        /**
         * Validates the settings, binds and starts serving.
         *
         * @return the running server, owned by the caller
         * @throws java.io.UncheckedIOException when the address cannot be bound
         * @throws IllegalArgumentException     for an invalid setting
         */
        public RpcServer start() {
            int maxFrameLength = checkedMaxFrameLength();
            int maxMetadataBytes = checkedMaxMetadataBytes();
            int streamWindowBytes = checkedStreamWindowBytes();
            Settings.checkAtLeastOne("maxInFlight", maxInFlight);
            Settings.checkNotNegative("drainTimeout", drainTimeout);
            ServerHealth health = health();
            RpcServer server = makeOnTransport(Role.SERVER, (t, owns) -> {
                RpcProvider.Server core = provider().server(t, new RpcProvider.ServerSettings(List.copyOf(methods.values()),
                        maxFrameLength, maxMetadataBytes, interceptors, maxInFlight, streamWindowBytes));
                ServerEndpoint endpoint;
                try {
                    endpoint = t.listen(bind, maxFrameLength, core);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not listen on " + bind, e);
                }
                LOG.log(System.Logger.Level.INFO, "RPC server listening on {0} ({1}, {2} methods)", endpoint.address(),
                        t.name(), methods.size());
                return new RpcServer(t, owns, core, endpoint, drainTimeout, health);
            });
            return server.observedBy(observers);
        }
    }
}
