package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.MetadataContract;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Timeout;

/**
 * {@link MetadataContract} over RDMA, for real in the Soft-RoCE VM: metadata blocks travel in the
 * send like the rest of the frame; the limits and the interceptors are the core's, whatever the
 * transport.
 */
@RdmaTest
@Timeout(300)
class MetadataRdmaTest extends MetadataContract {
    @Override
    protected RpcServer.Builder serverBuilder() {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).rdma(RdmaTestEnv.smallConfig());
    }

    @Override
    protected RpcClient.Builder clientBuilder(RpcServer server) {
        return RpcClient.builder().address(server.address()).rdma(RdmaTestEnv.smallConfig());
    }
}
