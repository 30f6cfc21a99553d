package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CallDeadlineTcpTest} over RDMA in the Soft-RoCE VM (issue 43, point 1): the RDMA hello,
 * which travels on the connection's TCP side, is held by a proxy in front of the server; call,
 * callAsync and openStream with 100 ms deadlines end with DEADLINE_EXCEEDED within 100 ms + 50 ms,
 * and once the hello goes through, a call with time enough is answered over the RDMA connection.
 */
@RdmaTest
@Timeout(300)
class RdmaCallDeadlineTest {
    private static final RdmaEnvironment ENV = RdmaEnvironment.discover();

    private static RdmaConfig config() {
        return new RdmaConfig().bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                .timeouts(t -> t.handshake(Duration.ofMinutes(2))).poolBytesPerAddress(1L << 40);
    }

    @Test
    void callsEndAtTheirDeadlineWhileTheHelloIsHeld() throws Exception {
        try (RpcServer server = RpcServer.builder().rdma(config()).bind(new InetSocketAddress(ENV.address1(), 0))
                .register(CallDeadlineTcpTest.ECHO, (ctx, s) -> s).start();
             HoldingProxy proxy = new HoldingProxy(InetAddress.getByName(ENV.address1()), server.address(),
                     Duration.ofSeconds(20));
             RpcClientPool warm = RpcClientPool.builder().rdma(config()).connectTimeout(Duration.ofMinutes(2)).build();
             RpcClientPool cold = RpcClientPool.builder().rdma(config()).connectTimeout(Duration.ofMinutes(2)).build();
             RpcClientPool pool = RpcClientPool.builder().rdma(config()).connectTimeout(Duration.ofMinutes(2)).build()) {
            // the same paths once, unhurried, so that the timed calls below do not load classes under emulation
            assertEquals("warm", warm.channel(server.address()).call(CallDeadlineTcpTest.ECHO, "warm", Duration.ofMinutes(1)));
            InetSocketAddress ep = proxy.address();
            // a first round on another pool, untimed, loads the deadline paths' classes under emulation
            CallDeadlineTcpTest.everyCallEndsAtItsDeadline(cold, ep, false);
            CallDeadlineTcpTest.everyCallEndsAtItsDeadline(pool, ep);
            CallDeadlineTcpTest.everyCallEndsAtItsDeadline(pool, ep);
            assertEquals("late", pool.channel(ep).call(CallDeadlineTcpTest.ECHO, "late", Duration.ofMinutes(2)));
            assertEquals(1, pool.connections(ep));
            assertTrue(pool.metrics().connectionsOpened() >= 1);
        }
    }
}
