package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.net.InetSocketAddress;

/** The transport contract, answered by TCP. */
class TcpTransportContractTest extends TransportContractTest {
    @Override
    protected Transport createTransport() {
        return TcpTransport.create(new TcpTransport.Config().ioThreads(2));
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress("127.0.0.1", 0);
    }
}
