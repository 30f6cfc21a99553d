package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.TransportContractTest;
import java.net.InetSocketAddress;
import dev.rdmarpc.testsupport.RdmaTest;

/**
 * The transport contract, answered by RDMA: one transport listens on the server address (rxe1) and
 * connects from the client address (rxe0), so it uses two devices at once.
 */
@RdmaTest
class RdmaTransportContractTest extends TransportContractTest {
    @Override
    protected Transport createTransport() {
        return RdmaTransport.create(RdmaTestEnv.smallConfig());
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return RdmaTestEnv.serverBind();
    }
}
