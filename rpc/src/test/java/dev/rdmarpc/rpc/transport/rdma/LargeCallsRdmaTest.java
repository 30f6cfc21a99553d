package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.LargeCallsContract;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcClientPool;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LargeCallsContract} over RDMA, for real in the Soft-RoCE VM: credits, the send window and the
 * write high-water mark must not let client and server wait on each other either. Fewer and smaller
 * calls than over TCP: the VM's emulated CPU moves about 10 MiB/s. With the default rendezvous
 * threshold, stated here: its 256 KiB calls go as split SENDs, its 1 and 8 MiB ones by rendezvous.
 *
 * <p>Its pings wait 30 s ({@code rdmarpc.tcp.pingTimeout}) where the default is 3 s: in the emulated
 * VM, client and server in this one JVM, the server's I/O thread left a ping unanswered, and sent
 * nothing over RDMA, for more than 5 s while four 8 MiB calls went by rendezvous (CI, twice), and
 * the client gave the live server up. This test is about the connection never locking, not about
 * liveness ({@code PeerStoppedTest} is).
 */
@RdmaTest
@Timeout(900)
class LargeCallsRdmaTest extends LargeCallsContract {
    private static final String PING_TIMEOUT = "rdmarpc.tcp.pingTimeout";
    private static String pingTimeoutBefore;

    @BeforeAll
    static void patientPings() {
        pingTimeoutBefore = System.setProperty(PING_TIMEOUT, "30s"); // read by each RdmaTransport made after it
    }

    @AfterAll
    static void pingsAsBefore() {
        if (pingTimeoutBefore == null) {
            System.clearProperty(PING_TIMEOUT);
        } else {
            System.setProperty(PING_TIMEOUT, pingTimeoutBefore);
        }
    }

    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().bufferPool(p -> p.maxPooledBytes(256L << 20).maxLargeBytes(256L << 20))
                .send(s -> s.rendezvousThreshold(RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD));
    }

    @Override
    protected RpcServer startServer() {
        return echoServer(RpcServer.builder().bind(RdmaTestEnv.serverBind())).rdma(config()).start();
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.builder().address(server.address()).rdma(config()).connect();
    }

    @Override
    protected RpcClientPool pool() {
        return RpcClientPool.builder().rdma(config()).build();
    }

    @Override
    protected Duration callTimeout() {
        return Duration.ofSeconds(90);
    }

    @Override
    protected Duration smallCallTimeout() {
        return Duration.ofSeconds(5);
    }

    @Test
    void blockingLargeCallsNeverLockTheConnection() throws Exception {
        runCases(new int[][] {
            {256 << 10, 64, 1},
            {256 << 10, 2, 2},
            {1 << 20, 8, 2},
            {8 << 20, 4, 1},
        }, 3);
    }
}
