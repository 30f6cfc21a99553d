package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.StreamsContract;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/**
 * {@link StreamsContract} over RDMA, for real in the Soft-RoCE VM: a stream's messages and window
 * updates are frames like any other, carried by the connection's credits; the per-stream window
 * rides above them. Fewer messages than over TCP: the VM's emulated CPU moves about 10 MiB/s.
 * Rendezvous is off here, so its 1 MiB messages go as split SENDs; {@link StreamsRendezvousRdmaTest}
 * runs the same with rendezvous.
 */
@RdmaTest
@Timeout(900)
class StreamsRdmaTest extends StreamsContract {
    /** @return the configuration of both sides */
    protected RdmaConfig config() {
        return RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20))
                .send(s -> s.rendezvousThreshold(0));
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
