package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.loop.CpuAffinity;
import dev.rdmarpc.rpc.transport.tcp.IoThreadCpusTest;
import dev.rdmarpc.testsupport.RdmaTest;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code RdmaConfig polling.ioThreadCpus} in the Soft-RoCE VM: a busy-polling server and client, each
 * I/O thread pinned to a vCPU of its own (the kernel's view, from /proc), answer calls.
 */
@RdmaTest
@Timeout(300)
class RdmaIoThreadCpusTest {
    @Test
    void busyPollingIoThreadsRunOnTheirOwnCpus() throws Exception {
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        int serverCpu = allowed.get(allowed.size() - 1);
        int clientCpu = allowed.get(0);
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig().threadNamePrefix("cpus-srv")
                     .loop(l -> l.idleStrategy(IdleStrategy.busyPoll()).ioThreadCpus(serverCpu)));
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().threadNamePrefix("cpus-cli")
                     .loop(l -> l.idleStrategy(IdleStrategy.busyPoll()).ioThreadCpus(clientCpu)));
             RpcServer s = RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                     .register(RdmaModePairingsTest.ECHO, (ctx, b) -> b).start();
             RpcClient c = RpcClient.builder().address(s.address()).transport(clientT).connect()) {
            byte[] payload = new byte[128];
            for (int i = 0; i < 20; i++) {
                payload[0] = (byte) i;
                assertArrayEquals(payload, c.call(RdmaModePairingsTest.ECHO, payload));
            }
            assertEquals(Integer.toString(serverCpu), IoThreadCpusTest.awaitCpusOfThreadNamed("cpus-srv-0",
                    Integer.toString(serverCpu)), "the server's I/O thread");
            assertEquals(Integer.toString(clientCpu), IoThreadCpusTest.awaitCpusOfThreadNamed("cpus-cli-0",
                    Integer.toString(clientCpu)), "the client's I/O thread");
        }
    }
}
