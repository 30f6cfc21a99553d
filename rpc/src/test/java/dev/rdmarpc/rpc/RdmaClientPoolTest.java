package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ClientPoolTest} over RDMA (issue 16, point 5): the pool's connections, its limits, its
 * reconnection and its idle closes with {@code RpcClientPool.builder().rdma(...)}, in the Soft-RoCE VM.
 */
@RdmaTest
@Timeout(300)
class RdmaClientPoolTest extends ClientPoolTest {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    /** A small pool, a handshake timeout for the VM's emulated CPU; no share per address (one client address here). */
    private static RdmaConfig config() {
        return new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                .timeouts(t -> t.handshake(Duration.ofMinutes(2))).poolBytesPerAddress(1L << 40);
    }

    @Override
    InetSocketAddress bindAddress() {
        return new InetSocketAddress(ENV.address1(), 0);
    }

    @Override
    RpcServer.Builder serverBuilder() {
        return RpcServer.builder().rdma(config());
    }

    @Override
    RpcClientPool.Builder poolBuilder() {
        return RpcClientPool.builder().rdma(config());
    }

    /** A failed RDMA connect (address and route resolution, then the refusal) under TCG can take longer than 50 ms. */
    @Override
    Duration reconnectBackoff() {
        return Duration.ofSeconds(3);
    }

    @Override
    Duration patience() {
        return Duration.ofSeconds(60);
    }
}
