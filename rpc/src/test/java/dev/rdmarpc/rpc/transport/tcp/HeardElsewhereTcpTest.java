package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A client connection whose calls travel another way (the TCP connection beside an RDMA one) takes
 * its handler's {@link FrameHandler#heardElsewhere} as the server's answer: a server silent on the
 * connection itself is not given up while it is heard there, and is, after the ping, once it is not.
 */
class HeardElsewhereTcpTest {
    @Test
    void aServerHeardElsewhereIsNotGivenUpUntilItFallsSilentThereToo() throws Exception {
        TcpTransport t = TcpTransport.create(new TcpConfig().pingInterval(Duration.ofMillis(200))
                .pingTimeout(Duration.ofMillis(300)));
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            AtomicBoolean talking = new AtomicBoolean(true);
            CompletableFuture<Throwable> closed = new CompletableFuture<>();
            FrameHandler calls = new FrameHandler() {
                @Override
                public void onFrame(Connection c, MemorySegment buffer, long offset, int length) {
                }

                @Override
                public void onTick(Connection c, long nowNanos) {
                }

                @Override
                public int callsInFlight() {
                    return 1;
                }

                @Override
                public boolean heardElsewhere() {
                    return talking.get();
                }

                @Override
                public void onClose(Connection c, Throwable cause) {
                    closed.complete(cause);
                }
            };
            t.connect((InetSocketAddress) silent.getLocalAddress(), 1 << 20, calls, Duration.ofSeconds(5));
            try (SocketChannel accepted = silent.accept()) {
                Thread.sleep(2000); // four times the ping's interval and timeout
                assertFalse(closed.isDone(), "given up while heard elsewhere: " + closed.getNow(null));
                long start = System.nanoTime();
                talking.set(false);
                Throwable cause = closed.get(10, TimeUnit.SECONDS);
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(String.valueOf(cause).contains("not even to a ping"), String.valueOf(cause));
                assertTrue(ms >= 400 && ms < 3000, "given up " + ms + " ms after it fell silent: interval 200 + timeout 300");
            }
        } finally {
            t.close();
        }
    }
}
