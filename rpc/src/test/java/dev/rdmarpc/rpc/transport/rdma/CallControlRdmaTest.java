package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.CallControlContract;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CallControlContract} over RDMA, for real in the Soft-RoCE VM: the cancel frame travels as
 * a send on the queue pair like any request. The bound is wider than over TCP: the VM's CPU is
 * emulated.
 */
@RdmaTest
@Timeout(600)
class CallControlRdmaTest extends CallControlContract {
    /**
     * Receive queues of a fixed depth (32, the default's maximum): one that grows under load keeps
     * the buffers it grew by, which the many-cancels test would count as left behind (a server that
     * grew from 8 + 3 to 32 + 3 receives showed 35 chunks against 32 after the first wave).
     */
    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().receiveQueue(q -> q.depth(32).maxDepth(32));
    }
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(config());
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.builder().address(server.address()).rdma(config()).connect();
    }

    @Override
    protected Duration cancelBound() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Duration chainDeadline() {
        return Duration.ofMillis(1500);
    }
}
