package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import dev.rdmarpc.rpc.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * Opens client connections with a builder's settings, fixed when the client or pool was built.
 *
 * @param transport through which connections are opened
 * @param metrics   the counters they update
 * @param settings  their settings
 */
record Connector(Transport transport, Counters metrics, RpcProvider.ClientSettings settings) {
    /**
     * @param address the server
     * @return the connection's client core, attached
     * @throws RpcException {@link Status#UNAVAILABLE} when the server cannot be reached,
     *                      {@link Status#RESOURCE_EXHAUSTED} when the transport has no room for it,
     *                      {@link Status#PERMISSION_DENIED} when the server's TLS check of clients refused it,
     *                      {@link Status#UNAUTHENTICATED} when the server refused the client's TLS certificate
     */
    ClientCore connect(InetSocketAddress address) {
        RpcProvider.ClientSettings s = settings;
        ClientCore core = new ClientCore(metrics, s.maxOutstanding(), s.maxFrameLength(), s.defaultTimeoutNanos(),
                s.sendHighWaterMark(), transport.name(), s.maxMetadataBytes(), s.interceptors(), s.streamWindowBytes());
        try {
            Connection c = transport.connect(address, s.maxFrameLength(), core.frameHandler(), s.connectTimeout());
            core.attach(c);
            return core;
        } catch (ResourceExhaustedException e) {
            throw new RpcException(Status.RESOURCE_EXHAUSTED, "cannot connect to " + address + ": " + e.getMessage(), e);
        } catch (CertificateRefusedException e) {
            throw new RpcException(Status.UNAUTHENTICATED, "cannot connect to " + address + ": " + e.getMessage(), e);
        } catch (PeerRefusedException e) {
            throw new RpcException(Status.PERMISSION_DENIED, "cannot connect to " + address + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new RpcException(Status.UNAVAILABLE, "cannot connect to " + address + ": " + e.getMessage(), e);
        }
    }
}
