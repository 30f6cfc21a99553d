package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.Transport;
import dev.rdmarpc.rpc.transport.TransportContractTest;
import dev.rdmarpc.testsupport.RdmaTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Nested;

/** The transport contract, answered by RDMA with the idle strategies other than the default. */
@RdmaTest
class RdmaIdleStrategiesContractTest {
    @Nested
    @RdmaTest
    class BusyPoll extends TransportContractTest {
        @Override
        protected Transport createTransport() {
            return RdmaTransport.create(RdmaTestEnv.smallConfig().loop(l -> l.idleStrategy(IdleStrategy.busyPoll())));
        }

        @Override
        protected InetSocketAddress listenAddress() {
            return RdmaTestEnv.serverBind();
        }
    }

    @Nested
    @RdmaTest
    class BackOff extends TransportContractTest {
        @Override
        protected Transport createTransport() {
            return RdmaTransport.create(RdmaTestEnv.smallConfig()
                    .loop(l -> l.idleStrategy(IdleStrategy.backOff(Duration.ofNanos(50_000)))));
        }

        @Override
        protected InetSocketAddress listenAddress() {
            return RdmaTestEnv.serverBind();
        }
    }
}
