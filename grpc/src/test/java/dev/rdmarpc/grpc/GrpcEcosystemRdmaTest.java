package dev.rdmarpc.grpc;

import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Timeout;

/** {@link GrpcEcosystemContract} over RDMA, for real in the Soft-RoCE VM. */
@RdmaTest
@Timeout(900)
class GrpcEcosystemRdmaTest extends GrpcEcosystemContract {
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
}
