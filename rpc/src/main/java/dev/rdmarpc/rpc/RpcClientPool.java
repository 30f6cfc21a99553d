package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.transport.Transport;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A pool of client connections to any number of endpoints, sharing one transport (one set of I/O
 * threads, one buffer pool).
 * {@snippet :
 * try (RpcClientPool pool = RpcClientPool.builder().maxConnectionsPerEndpoint(4).build()) {
 *     String r = pool.call(server.address(), ECHO, "hello");
 * }
 * }
 *
 * <p>Each call goes to the endpoint's open connection with the fewest outstanding calls; a new
 * connection is opened only when every open one has at least
 * {@link Builder#maxOutstandingPerConnection} / 2 outstanding and the endpoint has fewer than
 * {@link Builder#maxConnectionsPerEndpoint} connections. A connection that failed is dropped, and
 * the next call reconnects (after {@link Builder#reconnectBackoff} since the last failed attempt; a
 * call inside that window fails with {@link Status#UNAVAILABLE}). Connections idle for
 * {@link Builder#idleTimeout} (no outstanding call, none started) are closed.
 *
 * <p>Exhaustion: when every connection of the endpoint is open and full
 * ({@code maxConnectionsPerEndpoint x maxOutstandingPerConnection} calls outstanding), {@link #call}
 * waits for a free slot within its timeout, then fails with {@link Status#OVERLOADED};
 * {@link #callAsync} fails at once with {@link Status#OVERLOADED}; {@link #send} returns false.
 *
 * <p>Thread-safe; the creator closes it.
 */
public final class RpcClientPool implements AutoCloseable {
    private RpcClientPool() {
        throw new UnsupportedOperationException("implementation follows the API commit");
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Blocking call through the pool, with the default timeout.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param <Q>      request type
     * @param <R>      response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    public <Q, R> R call(InetSocketAddress endpoint, Method<Q, R> method, Q request) {
        throw new UnsupportedOperationException();
    }

    /**
     * Blocking call through the pool with options.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param options  timeout and attachment
     * @param <Q>      request type
     * @param <R>      response type
     * @return the response
     * @throws RpcException with the status of the failure
     */
    public <Q, R> R call(InetSocketAddress endpoint, Method<Q, R> method, Q request, CallOptions options) {
        throw new UnsupportedOperationException();
    }

    /**
     * Asynchronous call through the pool.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param <Q>      request type
     * @param <R>      response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(InetSocketAddress endpoint, Method<Q, R> method, Q request) {
        throw new UnsupportedOperationException();
    }

    /**
     * Asynchronous call through the pool with options.
     *
     * @param endpoint the server
     * @param method   the method
     * @param request  the request
     * @param options  timeout and attachment
     * @param <Q>      request type
     * @param <R>      response type
     * @return a future completed with the response or an {@link RpcException}
     */
    public <Q, R> CompletableFuture<R> callAsync(InetSocketAddress endpoint, Method<Q, R> method, Q request,
                                                 CallOptions options) {
        throw new UnsupportedOperationException();
    }

    /**
     * Zero-allocation call through the pool (see {@link RpcClient#send}). Opening a new connection,
     * when one is needed, blocks and allocates.
     *
     * @param endpoint the server
     * @param method   the method
     * @param payload  the request bytes
     * @param listener receives the outcome on an I/O thread
     * @param tag      handed back to the listener
     * @return true when sent; false when every connection of the endpoint is full
     * @throws RpcException as {@link RpcClient#send}, and {@link Status#UNAVAILABLE} when no
     *                      connection can be made
     */
    public boolean send(InetSocketAddress endpoint, Method<?, ?> method, MemorySegment payload,
                        ResponseListener listener, long tag) {
        throw new UnsupportedOperationException();
    }

    /**
     * @param endpoint a server
     * @return open connections to it now
     */
    public int connections(InetSocketAddress endpoint) {
        throw new UnsupportedOperationException();
    }

    /** @return the pool's counters (all its connections, past and present) */
    public RpcMetrics metrics() {
        throw new UnsupportedOperationException();
    }

    /** Closes every connection (pending calls fail with CONNECTION_CLOSED) and the owned transport. */
    @Override
    public void close() {
        throw new UnsupportedOperationException();
    }

    /** Settings of a pool; {@link #build()} validates them. Not thread-safe. */
    public static final class Builder {
        private Builder() {
        }

        /**
         * @param n most connections per endpoint, at least 1; default 4
         * @return this
         */
        public Builder maxConnectionsPerEndpoint(int n) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param n most outstanding calls per connection; default 1024
         * @return this
         */
        public Builder maxOutstandingPerConnection(int n) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param timeout close connections idle this long; default 60 s
         * @return this
         */
        public Builder idleTimeout(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param backoff wait after a failed connection attempt before trying again; default 100 ms
         * @return this
         */
        public Builder reconnectBackoff(Duration backoff) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param timeout how long connecting may take; default 5 s
         * @return this
         */
        public Builder connectTimeout(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param timeout timeout of calls that do not set their own; default 30 s
         * @return this
         */
        public Builder defaultTimeout(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param bytes the largest frame sent or accepted; default 16 MiB
         * @return this
         */
        public Builder maxFrameLength(int bytes) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param n event-loop threads of the pool's own transport; default 1
         * @return this
         */
        public Builder ioThreads(int n) {
            throw new UnsupportedOperationException();
        }

        /**
         * @param transport a transport the caller owns; default: the pool creates a TCP transport
         * @return this
         */
        public Builder transport(Transport transport) {
            throw new UnsupportedOperationException();
        }

        /**
         * @return the pool, owned by the caller
         * @throws IllegalArgumentException for an invalid setting
         */
        public RpcClientPool build() {
            throw new UnsupportedOperationException();
        }
    }
}
