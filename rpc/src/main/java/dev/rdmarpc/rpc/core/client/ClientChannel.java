package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.ClientInterceptor;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcMetrics;
import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.transport.Transport;
import java.net.InetSocketAddress;

/**
 * The channel of an {@link dev.rdmarpc.rpc.RpcClient}: its one connection, never reconnected; a call
 * on it once closed fails with {@link Status#CONNECTION_CLOSED}, saying so.
 */
public final class ClientChannel extends AbstractChannel implements RpcProvider.Client {
    private final ClientCore core;
    private final Counters metrics;
    private final long defaultStreamTimeoutNanos;

    private ClientChannel(ClientCore core, Counters metrics, long defaultStreamTimeoutNanos) {
        this.core = core;
        this.metrics = metrics;
        this.defaultStreamTimeoutNanos = defaultStreamTimeoutNanos;
    }

    /**
     * Opens the connection.
     *
     * @param transport through which it is opened
     * @param settings  its settings, validated
     * @param address   the server
     * @return the connected channel
     * @throws RpcException as {@link Connector#connect}
     */
    public static ClientChannel connect(Transport transport, RpcProvider.ClientSettings settings,
                                        InetSocketAddress address) {
        Counters metrics = new Counters();
        ClientCore core = new Connector(transport, metrics, settings).connect(address);
        return new ClientChannel(core, metrics, settings.defaultStreamTimeoutNanos());
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

    @Override
    public InetSocketAddress remoteAddress() {
        return core.remoteAddress();
    }

    @Override
    public boolean isOpen() {
        return core.isOpen();
    }

    @Override
    public int outstanding() {
        return core.outstanding();
    }

    @Override
    public RpcMetrics metrics() {
        return metrics;
    }

    @Override
    public void close() {
        core.close();
    }

    @Override
    public String toString() {
        return String.valueOf(core.connection());
    }
}
