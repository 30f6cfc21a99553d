package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.TransportContractTest;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The transport contract, answered by RDMA: one transport listens on the server address (rxe1) and
 * connects from the client address (rxe0), so it uses two devices at once.
 */
@Tag("rdma")
class RdmaTransportContractTest extends TransportContractTest {
    @BeforeAll
    static void devices() {
        RdmaTestEnv.requireDevices();
    }

    @Override
    protected Transport createTransport() {
        return RdmaTransport.create(RdmaTestEnv.smallConfig());
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return RdmaTestEnv.serverBind();
    }
}
