package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;
import java.time.Duration;

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
 * <p>Threads: {@link Builder#ioThreads} event loops (default: the number of cores) read, decode,
 * run inline handlers and write; blocking handlers run on virtual threads. Unknown methods and
 * throwing handlers are answered with error responses; bytes that break the protocol close only the
 * offending connection (logged), everyone else keeps being served.
 *
 * <p>Ownership and shutdown: the creator closes the server. {@link #shutdown(Duration)} stops
 * accepting, answers new requests with {@link Status#SHUTTING_DOWN}, waits for calls in flight to
 * finish and their responses to be written, then closes the connections and (when the server created
 * it) the transport. Thread-safe.
 */
public final class RpcServer implements AutoCloseable {
    private RpcServer() {
        throw new UnsupportedOperationException("implementation follows the API commit");
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the bound address, with the real port when port 0 was asked for */
    public InetSocketAddress address() {
        throw new UnsupportedOperationException();
    }

    /** @return the server's counters */
    public RpcMetrics metrics() {
        throw new UnsupportedOperationException();
    }

    /** @return the buffer pool of the server's transport (its counters, its high-water mark) */
    public BufferPool bufferPool() {
        throw new UnsupportedOperationException();
    }

    /** @return true until shutdown starts */
    public boolean isRunning() {
        throw new UnsupportedOperationException();
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
        throw new UnsupportedOperationException();
    }

    /** {@link #shutdown(Duration)} with the builder's {@link Builder#drainTimeout}. */
    @Override
    public void close() {
        throw new UnsupportedOperationException();
    }

    /**
     * Settings and methods of a server; {@link #start()} validates them and starts serving. Not
     * thread-safe; use one builder per server.
     */
    public static final class Builder {
        private Builder() {
        }

        /**
         * @param address where to listen; default 127.0.0.1 on a free port
         * @return this
         */
        public Builder bind(InetSocketAddress address) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param n event-loop threads when the server creates its transport; default the number of
         *          cores. Ignored with {@link #transport(Transport)}.
         * @return this
         */
        public Builder ioThreads(int n) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param bytes the largest frame accepted or sent (header + payload + attachment); default
         *              {@value FrameDescriptor#DEFAULT_MAX_FRAME_LENGTH}; at most
         *              {@value FrameDescriptor#MAX_FRAME_LENGTH_LIMIT}. Use the same value on clients.
         * @return this
         */
        public Builder maxFrameLength(int bytes) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param n most blocking-handler calls in flight in the whole server; more are answered with
         *          {@link Status#OVERLOADED}. Default 10,000.
         * @return this
         */
        public Builder maxInFlight(int n) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param timeout how long {@link RpcServer#close()} waits for calls in flight; default 5 s
         * @return this
         */
        public Builder drainTimeout(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param config buffer pool settings when the server creates its transport; default
         *               {@code new BufferPool.Config()}. Ignored with {@link #transport(Transport)}.
         * @return this
         */
        public Builder bufferPool(BufferPool.Config config) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param transport a transport the caller owns (and closes after the server); default: the
         *                  server creates and owns a TCP transport
         * @return this
         */
        public Builder transport(Transport transport) {
            throw new UnsupportedOperationException();
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
            throw new UnsupportedOperationException();
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
            throw new UnsupportedOperationException();
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
            throw new UnsupportedOperationException();
        }

        /**
         * Validates the settings, binds and starts serving.
         *
         * @return the running server, owned by the caller
         * @throws java.io.UncheckedIOException when the address cannot be bound
         * @throws IllegalArgumentException     for an invalid setting
         */
        public RpcServer start() {
            throw new UnsupportedOperationException();
        }
    }
}
