package dev.rdmarpc.grpc;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Timeout;

/** {@link GrpcHostileContract} over RDMA, for real in the Soft-RoCE VM. */
@RdmaTest
@Timeout(900)
class GrpcHostileRdmaTest extends GrpcHostileContract {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    @Override
    protected RdmarpcServerBuilder serverBuilder() {
        return RdmarpcServerBuilder.forAddress(new InetSocketAddress(ENV.address1(), 0)).rdma(GrpcInteropRdmaTest::config);
    }

    @Override
    protected RdmarpcChannelBuilder channelBuilder(String target) {
        return RdmarpcChannelBuilder.forTarget(target).rdma(GrpcInteropRdmaTest::config);
    }

    @Override
    protected String host() {
        return ENV.address1();
    }

    @Override
    protected long slowMillis() {
        return 1000;
    }

    @Override
    protected RpcClient rawClient() {
        return RpcClient.builder().address(new InetSocketAddress(ENV.address1(), server.getPort()))
                .rdma(GrpcInteropRdmaTest::config).connect();
    }
}
