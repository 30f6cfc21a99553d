package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcServer;
import org.junit.jupiter.api.Timeout;

/** {@link TelemetryContract} over TCP on loopback. */
@Timeout(120)
class TelemetryTcpTest extends TelemetryContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder();
    }

    @Override
    protected RpcClientPool.Builder poolBuilder() {
        return RpcClientPool.builder();
    }

    @Override
    protected String transportName() {
        return "tcp";
    }
}
