package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.transport.Acceptor;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * What {@link RpcClient}, {@link RpcClientPool} and {@link RpcServer} are built on: the implementation
 * of connections and calls, which this module provides (as a {@link java.util.ServiceLoader} service)
 * and the builders find when they build. This interface is for the implementation in this module, not
 * for applications: an application builds with {@link RpcClient#builder()},
 * {@link RpcClientPool#builder()} and {@link RpcServer#builder()}, and neither calls nor implements it.
 * It exists so that this package, the API, depends on no implementation package (the implementation
 * depends on the API, never the reverse).
 */
public interface RpcProvider {
    /**
     * Opens one client connection.
     *
     * @param transport through which it is opened
     * @param settings  its settings, validated
     * @param address   the server
     * @return the connected client
     * @throws RpcException as {@link RpcClient.Builder#connect()}
     */
    Client connect(Transport transport, ClientSettings settings, InetSocketAddress address);

    /**
     * @param transport through which the pool's connections are opened
     * @param settings  the settings of each connection, validated
     * @param pool      the pool's own settings, validated
     * @return the pool, with no connection yet
     */
    Pool pool(Transport transport, ClientSettings settings, PoolSettings pool);

    /**
     * @param transport the server's transport
     * @param settings  the server's settings and methods, validated
     * @return the server, to be given to {@link Transport#listen} as what accepts its connections
     */
    Server server(Transport transport, ServerSettings settings);

    /** One client connection: its calls are {@link RpcChannel}'s. */
    interface Client extends RpcChannel {
        /** @return the server's address */
        InetSocketAddress remoteAddress();

        /** @return true until the connection closes */
        boolean isOpen();

        /** @return calls awaiting a response now */
        int outstanding();

        /** @return the connection's counters */
        RpcMetrics metrics();

        /** Closes the connection; pending calls fail with {@link Status#CONNECTION_CLOSED}. Idempotent. */
        void close();
    }

    /** A pool's connections to any number of endpoints, as {@link RpcClientPool} describes. */
    interface Pool {
        /**
         * @param endpoint the server
         * @return its channel, the same object for every call with the same address
         * @throws RpcException {@link Status#CONNECTION_CLOSED} when the pool is closed
         */
        RpcChannel channel(InetSocketAddress endpoint);

        /**
         * @param endpoint a server
         * @return open connections to it now
         */
        int connections(InetSocketAddress endpoint);

        /** @return the counters of all the pool's connections, past and present */
        RpcMetrics metrics();

        /** Closes every connection (pending calls fail with CONNECTION_CLOSED); idempotent. */
        void close();
    }

    /** A server's calls: it accepts the connections of its transport's listening endpoint. */
    interface Server extends Acceptor {
        /** @return the server's counters */
        RpcMetrics metrics();

        /** Refuses new calls with {@link Status#SHUTTING_DOWN} from now on. */
        void beginShutdown();

        /**
         * @param timeoutNanos how long to wait
         * @return true when every call in flight finished and its response was written in time
         */
        boolean awaitDrained(long timeoutNanos);

        /** Closes every connection. */
        void closeConnections();
    }

    /**
     * The settings of each client connection, as {@link ClientBuilder} and {@link RpcBuilder} describe
     * them.
     *
     * @param maxOutstanding            most calls outstanding on one connection
     * @param maxFrameLength            the largest frame sent or accepted
     * @param defaultTimeoutNanos       the timeout of calls that set none
     * @param connectTimeout            how long opening a connection may take
     * @param maxMetadataBytes          the most metadata bytes one frame may carry
     * @param interceptors              run around every typed call, in order
     * @param streamWindowBytes         a stream's receive window
     * @param sendHighWaterMark         request bytes one connection keeps queued unsent
     * @param defaultStreamTimeoutNanos the timeout of streams that set none
     */
    record ClientSettings(int maxOutstanding, int maxFrameLength, long defaultTimeoutNanos, Duration connectTimeout,
                          int maxMetadataBytes, List<ClientInterceptor> interceptors, int streamWindowBytes,
                          long sendHighWaterMark, long defaultStreamTimeoutNanos) {
        /** Copies {@code interceptors}. */
        public ClientSettings {
            interceptors = List.copyOf(interceptors);
        }
    }

    /**
     * The settings of a pool, as {@link RpcClientPool.Builder} describes them.
     *
     * @param maxConnectionsPerEndpoint most connections per endpoint
     * @param idleTimeout               connections idle this long are closed
     * @param reconnectBackoff          the wait after a failed connection attempt
     * @param healthService             the service health checks ask about; null: no health checks
     * @param healthCheckInterval       how often health checks ask
     */
    record PoolSettings(int maxConnectionsPerEndpoint, Duration idleTimeout, Duration reconnectBackoff,
                        String healthService, Duration healthCheckInterval) {
    }

    /**
     * The settings of a server, as {@link RpcServer.Builder} describes them.
     *
     * @param methods           the registered methods, in order, their ids distinct
     * @param maxFrameLength    the largest frame sent or accepted
     * @param maxMetadataBytes  the most metadata bytes one frame may carry
     * @param interceptors      run around every call, in order
     * @param maxInFlight       most held calls in flight in the whole server
     * @param streamWindowBytes a stream's receive window
     */
    record ServerSettings(List<Registration> methods, int maxFrameLength, int maxMetadataBytes,
                          List<ServerInterceptor> interceptors, int maxInFlight, int streamWindowBytes) {
        /** Copies the lists. */
        public ServerSettings {
            methods = List.copyOf(methods);
            interceptors = List.copyOf(interceptors);
        }
    }

    /**
     * One registered method.
     *
     * @param method  the method
     * @param kind    how it is served
     * @param handler its handler: a {@link Handler} (INLINE, BLOCKING), {@link RawHandler} (RAW),
     *                {@link AsyncHandler} (ASYNC) or {@link StreamHandler} (STREAM)
     */
    record Registration(Method<?, ?> method, Kind kind, Object handler) {
        /** How a method is served: the {@link RpcServer.Builder} method it was registered with. */
        public enum Kind {
            /** {@link RpcServer.Builder#registerRaw}. */
            RAW,
            /** {@link RpcServer.Builder#register}. */
            INLINE,
            /** {@link RpcServer.Builder#registerBlocking}. */
            BLOCKING,
            /** {@link RpcServer.Builder#registerAsync}. */
            ASYNC,
            /** {@link RpcServer.Builder#registerStream}. */
            STREAM
        }
    }
}
