package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Liveness over TCP (issue 15, point 5): a client whose calls wait on a server that says nothing
 * pings it, and gives it up when not even the ping is answered; a live server answers pings from its
 * I/O thread whatever its handlers do. Loopback only; the silent server is a socket that reads and
 * never writes (to the client, the same as a host that vanished).
 */
@Timeout(30)
class LivenessTcpTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<Integer, String> SLEEP = Method.of("sleep", Codecs.INT, Codecs.STRING);

    private static RpcClient client(InetSocketAddress server) throws Exception {
        return RpcClient.builder().address(server)
                .tcp(cfg -> cfg.pingInterval(Duration.ofMillis(200)).pingTimeout(Duration.ofMillis(300))).connect();
    }

    @Test
    void callsOnASilentServerFailSoonAfterAnUnansweredPing() throws Exception {
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient c = client((InetSocketAddress) silent.getLocalAddress());
             SocketChannel accepted = silent.accept()) {
            long start = System.nanoTime();
            CompletableFuture<String> call = c.callAsync(ECHO, "anyone?", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            RpcException rpc = assertInstanceOf(RpcException.class, e.getCause());
            assertEquals(Status.CONNECTION_CLOSED, rpc.status());
            assertTrue(rpc.getMessage().contains("no answer from the peer") && rpc.getMessage().contains("ping"), rpc.getMessage());
            assertTrue(ms >= 500 && ms < 3000, "given up after " + ms + " ms: interval 200 + timeout 300, not the call's 20 s");
            assertFalse(c.isOpen());

            // What the silent server received: the request, then one ping.
            accepted.socket().setSoTimeout(5000);
            ByteBuffer request = TestSupport.readFrame(accepted);
            assertEquals(FrameDescriptor.TYPE_REQUEST, request.get(FrameDescriptor.TYPE_OFFSET));
            ByteBuffer ping = TestSupport.readFrame(accepted);
            assertNotNull(ping);
            assertEquals(FrameDescriptor.TYPE_PING, ping.get(FrameDescriptor.TYPE_OFFSET));
            assertEquals(FrameDescriptor.HEADER_LENGTH, ping.limit());
        }
    }

    @Test
    void aClientStillSendingALargeRequestIsNotWaitingInSilence() throws Exception {
        Method<byte[], byte[]> bytes = Method.of("bytes", Codecs.BYTES, Codecs.BYTES);
        int size = 4 << 20;
        try (ServerSocketChannel slow = ServerSocketChannel.open()) {
            slow.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 64 * 1024); // accepted sockets take it
            slow.bind(new InetSocketAddress("127.0.0.1", 0));
            try (RpcClient c = client((InetSocketAddress) slow.getLocalAddress());
                 SocketChannel accepted = slow.accept()) {
                long start = System.nanoTime();
                CompletableFuture<byte[]> call = c.callAsync(bytes, new byte[size], CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
                // The server takes the request at 64 KiB per 40 ms (about 2.5 s in all), then says nothing.
                ByteBuffer chunk = ByteBuffer.allocate(64 * 1024);
                long read = 0;
                while (read < size + FrameDescriptor.HEADER_LENGTH + 4 && !call.isDone()) {
                    chunk.clear();
                    int n = accepted.read(chunk);
                    if (n < 0) {
                        break;
                    }
                    read += n;
                    Thread.sleep(40);
                }
                long uploadMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(read >= size, "the whole request went out before the client gave up: " + read + " bytes in "
                        + uploadMs + " ms (pingInterval 200 ms + pingTimeout 300 ms)");
                assertTrue(uploadMs > 1000, "the upload was slow: " + uploadMs + " ms");
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause().getMessage().contains("no answer from the peer"), e.getCause().getMessage());
            }
        }
    }

    @Test
    void aLiveServerAnswersPingsWhileItsHandlerTakesLong() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .registerBlocking(SLEEP, (ctx, ms) -> {
                    Thread.sleep(ms);
                    return "slept " + ms;
                }).start();
             RpcClient c = client(server.address())) {
            // 1.5 s of silence: without its pongs the client would give up after 0.5 s
            assertEquals("slept 1500", c.call(SLEEP, 1500));
            assertTrue(c.isOpen());
        }
    }

    @Test
    void aServerAnswersAPingWithAPongOfItsId() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .register(ECHO, (ctx, s) -> s).start();
             SocketChannel ch = TestSupport.open(server.address())) {
            byte[] ping = new byte[FrameDescriptor.HEADER_LENGTH];
            new FrameHeaderEncoder().wrap(MemorySegment.ofArray(ping), 0).type(FrameDescriptor.TYPE_PING).requestId(77);
            TestSupport.write(ch, ping);
            ByteBuffer pong = TestSupport.readFrame(ch);
            assertNotNull(pong);
            assertEquals(FrameDescriptor.TYPE_PONG, pong.get(FrameDescriptor.TYPE_OFFSET));
            assertEquals(77, pong.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
            assertEquals(FrameDescriptor.HEADER_LENGTH, pong.limit());

            byte[] fat = TestSupport.requestFrame(78, ECHO.id(), new byte[8], new byte[0]);
            fat[FrameDescriptor.TYPE_OFFSET] = FrameDescriptor.TYPE_PING; // a ping with a payload: not allowed
            TestSupport.write(ch, fat);
            String why = TestSupport.lastWord(ch, Status.PROTOCOL_ERROR);
            assertTrue(why.contains("length"), why);
        }
    }

    @Test
    void aClientWithNothingAwaitedNeverPingsSoTheServersIdleTimeoutStillCloses() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.idleTimeout(Duration.ofMillis(500)))
                .register(ECHO, (ctx, s) -> s).start();
             RpcClient c = client(server.address())) {
            assertEquals("once", c.call(ECHO, "once"));
            TestSupport.await("closed by the server for idleness", Duration.ofSeconds(5), () -> !c.isOpen());
        }
    }
}
