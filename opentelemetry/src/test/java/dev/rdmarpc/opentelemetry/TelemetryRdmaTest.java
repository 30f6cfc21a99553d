package dev.rdmarpc.opentelemetry;

import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/** {@link TelemetryContract} over RDMA, in the Soft-RoCE VM: spans linked, metrics counted, RDMA counters reported. */
@RdmaTest
@Timeout(300)
class TelemetryRdmaTest extends TelemetryContract {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    private static RdmaConfig config() {
        return new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                .timeouts(t -> t.handshake(Duration.ofMinutes(2))).poolBytesPerAddress(1L << 40);
    }

    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().rdma(config()).bind(new InetSocketAddress(ENV.address1(), 0));
    }

    @Override
    protected RpcClientPool.Builder poolBuilder() {
        return RpcClientPool.builder().rdma(config());
    }

    @Override
    protected String transportName() {
        return "rdma";
    }
}
