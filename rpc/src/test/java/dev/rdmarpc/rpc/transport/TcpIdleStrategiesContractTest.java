package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Nested;

/** The transport contract, answered by TCP with the idle strategies other than the default (adaptive). */
class TcpIdleStrategiesContractTest {
    @Nested
    class BusyPoll extends TransportContractTest {
        @Override
        protected Transport createTransport() {
            // one thread: on a small machine two spinning threads would starve the test itself
            return TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1).idleStrategy(IdleStrategy.busyPoll())));
        }

        @Override
        protected InetSocketAddress listenAddress() {
            return new InetSocketAddress("127.0.0.1", 0);
        }
    }

    @Nested
    class Event extends TransportContractTest {
        @Override
        protected Transport createTransport() {
            return TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(2).idleStrategy(IdleStrategy.event())));
        }

        @Override
        protected InetSocketAddress listenAddress() {
            return new InetSocketAddress("127.0.0.1", 0);
        }
    }

    @Nested
    class BackOff extends TransportContractTest {
        @Override
        protected Transport createTransport() {
            return TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(2)
                    .idleStrategy(IdleStrategy.backOff(Duration.ofNanos(50_000)))));
        }

        @Override
        protected InetSocketAddress listenAddress() {
            return new InetSocketAddress("127.0.0.1", 0);
        }
    }
}
