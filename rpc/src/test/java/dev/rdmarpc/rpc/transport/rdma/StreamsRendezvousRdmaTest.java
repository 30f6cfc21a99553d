package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.StreamsContract;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/**
 * {@link StreamsContract} over RDMA with rendezvous on both sides: its 1 MiB messages are read by
 * rendezvous, and its many small ones travel beside credits of which each side keeps its last for
 * done reports. With that kept credit counted as available by the peer (before the fix in
 * {@link Credits}), the client and server streaming tests waited forever, each side for the other's
 * credits.
 */
@RdmaTest
@Timeout(300)
class StreamsRendezvousRdmaTest extends StreamsContract {
    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20))
                .send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD));
    }

    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(config());
    }

    @Override
    protected RpcClient.Builder clientBuilder(RpcServer server) {
        return RpcClient.builder().address(server.address()).rdma(config());
    }

    @Override
    protected int manySmallMessages() {
        return 20_000;
    }

    @Override
    protected Duration streamDeadline() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected int largeMessages() {
        return 8;
    }
}
