package dev.rdmarpc.rpc;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/** {@link CancellationContract} over TCP loopback. */
@Timeout(300)
class CancellationTcpTest extends CancellationContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.connect(server.address());
    }

    @Override
    protected Duration cancelBound() {
        return Duration.ofMillis(500);
    }
}
