package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import java.lang.foreign.MemorySegment;
import dev.rdmarpc.rpc.transport.stream.TcpConnection;
import java.net.InetSocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import org.junit.jupiter.api.Test;

/** Socket options: the loopback send buffer (left to the kernel when 0), keepalive timers, on both ends. */
class SocketOptionsTest {
    static final FrameHandler IGNORE = new FrameHandler() {
        @Override
        public void onFrame(Connection connection, MemorySegment buffer, long offset, int length) {
        }

        @Override
        public void onTick(Connection connection, long nowNanos) {
        }

        @Override
        public void onClose(Connection connection, Throwable cause) {
        }
    };

    /** @return {@code option} of the client's and the accepted connection */
    private static <T> List<T> options(TcpConfig config, SocketOption<T> option) throws Exception {
        try (TcpTransport t = TcpTransport.create(config.loop(l -> l.ioThreads(1)))) {
            CompletableFuture<Connection> accepted = new CompletableFuture<>();
            var endpoint = t.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, c -> {
                accepted.complete(c);
                return IGNORE;
            });
            Connection client = t.connect(endpoint.address(), 1 << 20, IGNORE, Duration.ofSeconds(5));
            Connection server = accepted.get(5, TimeUnit.SECONDS);
            return List.of(((NioSocket) ((TcpConnection) client).channel()).channel().getOption(option),
                    ((NioSocket) ((TcpConnection) server).channel()).channel().getOption(option));
        }
    }

    private static int[] sendBuffers(TcpConfig config) throws Exception {
        return options(config, StandardSocketOptions.SO_SNDBUF).stream().mapToInt(Integer::intValue).toArray();
    }

    /** Keepalive timers are set on both ends: a vanished peer is noticed in seconds, not Linux's 2 hours. */
    @Test
    void keepaliveTimersAreSetOnBothEnds() throws Exception {
        assertEquals(List.of(true, true), options(new TcpConfig(), StandardSocketOptions.SO_KEEPALIVE));
        assertEquals(List.of(10, 10), options(new TcpConfig(), ExtendedSocketOptions.TCP_KEEPIDLE));
        assertEquals(List.of(5, 5), options(new TcpConfig(), ExtendedSocketOptions.TCP_KEEPINTERVAL));
        assertEquals(List.of(3, 3), options(new TcpConfig(), ExtendedSocketOptions.TCP_KEEPCOUNT));
        TcpConfig custom = new TcpConfig()
                .keepalive(k -> k.idle(Duration.ofSeconds(7)).interval(Duration.ofSeconds(2)).count(4));
        assertEquals(List.of(7, 7), options(custom, ExtendedSocketOptions.TCP_KEEPIDLE));
        assertEquals(List.of(2, 2), options(custom, ExtendedSocketOptions.TCP_KEEPINTERVAL));
        assertEquals(List.of(4, 4), options(custom, ExtendedSocketOptions.TCP_KEEPCOUNT));
        assertThrows(IllegalArgumentException.class,
                () -> new TcpConfig().keepalive(k -> k.idle(Duration.ofMillis(1500))).conclude());
        assertThrows(IllegalArgumentException.class, () -> new TcpConfig().keepalive(k -> k.count(200)).conclude());
    }

    @Test
    void loopbackConnectionsGetTheLoopbackSendBuffer() throws Exception {
        int[] set = sendBuffers(new TcpConfig());
        int[] kernel = sendBuffers(new TcpConfig().loopbackSocketSendBuffer(0));
        int asked = TcpConfig.DEFAULT_LOOPBACK_SOCKET_SEND_BUFFER;
        int plain;
        try (var listener = java.nio.channels.ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             var socket = java.nio.channels.SocketChannel.open(listener.getLocalAddress())) {
            plain = socket.getOption(StandardSocketOptions.SO_SNDBUF); // what the kernel gives a loopback socket
        }
        assertTrue(plain > 2 * asked, "this kernel's own loopback send buffer is small already (" + plain
                + "): the test cannot tell the setting from it");
        for (int i = 0; i < 2; i++) {
            // Linux reports twice what was set (room for its bookkeeping)
            assertTrue(set[i] >= asked && set[i] <= 2 * asked, "end " + i + ": SO_SNDBUF " + set[i]);
            assertTrue(kernel[i] == plain, "end " + i + " left to the kernel: SO_SNDBUF " + kernel[i] + ", plain " + plain);
        }
        int[] explicit = sendBuffers(new TcpConfig().socketSendBuffer(64 * 1024));
        for (int b : explicit) {
            assertTrue(b >= 64 * 1024 && b <= 128 * 1024, "an explicit socketSendBuffer wins: " + b);
        }
    }
}
