package dev.rdmarpc.grpc;

import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/**
 * The gRPC transport contract over RDMA, for real in the Soft-RoCE VM: the server listens on rxe1's
 * address, the channel connects from rxe0's side; every call is an rdmarpc stream over a reliable
 * connected queue pair.
 */
@RdmaTest
@Timeout(900)
class GrpcInteropRdmaTest extends GrpcTransportContract {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    /** A small pool (the VM has little memory) and a handshake timeout for its emulated CPU. */
    static RdmaConfig config(RdmaConfig cfg) {
        return cfg.bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(128L << 20).maxLargeBytes(128L << 20))
                .timeouts(t -> t.handshake(Duration.ofMinutes(2))).poolBytesPerAddress(1L << 40);
    }

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

    /** RDMA (a private receive queue, the default) keeps received frames: parsed in place. */
    @Override
    protected int receiveCopiesPerMessage() {
        return 0;
    }
}
