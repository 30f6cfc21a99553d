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
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(RdmaTestEnv.smallConfig());
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig()).connect();
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
