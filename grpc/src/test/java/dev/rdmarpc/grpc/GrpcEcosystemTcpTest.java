package dev.rdmarpc.grpc;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Timeout;

/** {@link GrpcEcosystemContract} over TCP loopback. */
@Timeout(120)
class GrpcEcosystemTcpTest extends GrpcEcosystemContract {
    @Override
    protected RdmarpcServerBuilder serverBuilder() {
        return RdmarpcServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
    }

    @Override
    protected RdmarpcChannelBuilder channelBuilder(String target) {
        return RdmarpcChannelBuilder.forTarget(target);
    }

    @Override
    protected String host() {
        return "127.0.0.1";
    }
}
