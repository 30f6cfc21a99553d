package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile and careless peers over TCP (issue 15): stalled frames, idle connections, refusals the
 * client hears about, responses owed before a protocol error. Raw sockets on 127.0.0.1, short
 * timeouts set here, each test bounded.
 */
@Timeout(30)
class HostilePeerTcpTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<Integer, String> SLEEP = Method.of("sleep", Codecs.INT, Codecs.STRING);
    static final int STALLED = 20;

    private static RpcServer server(UnaryOperator<dev.rdmarpc.rpc.transport.tcp.TcpConfig> tcp) {
        return RpcServer.builder()
                .bind(new java.net.InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> tcp.apply(cfg.loop(l -> l.ioThreads(1))))
                .register(ECHO, (ctx, s) -> s)
                .registerBlocking(SLEEP, (ctx, ms) -> {
                    Thread.sleep(ms);
                    return "slept " + ms;
                })
                .start();
    }

    @Test
    void aFrameThatStallsIsRefusedAfterTheFrameReadTimeoutAndItsBuffersGoBack() throws Exception {
        try (RpcServer server = server(cfg -> cfg.frameReadTimeout(Duration.ofMillis(300)).idleTimeout(Duration.ZERO))) {
            BufferPool pool = server.bufferPool();
            int chunksBefore = pool.chunksInUse();
            byte[] small = TestSupport.requestFrame(1, ECHO.id(), new byte[100], new byte[0]);
            byte[] large = TestSupport.requestFrame(2, ECHO.id(), new byte[200_000], new byte[0]);
            List<SocketChannel> stalled = new ArrayList<>();
            try {
                long start = System.nanoTime();
                for (int i = 0; i < STALLED; i++) {
                    SocketChannel ch = TestSupport.open(server.address());
                    stalled.add(ch);
                    TestSupport.write(ch, Arrays.copyOf(small, 16)); // 16 header bytes, then nothing
                }
                SocketChannel big = TestSupport.open(server.address());
                stalled.add(big);
                TestSupport.write(big, Arrays.copyOf(large, 70_000)); // past a chunk: a large buffer holds it
                TestSupport.await("receive buffers taken", Duration.ofSeconds(5),
                        () -> pool.chunksInUse() >= chunksBefore + STALLED && pool.largeBuffersInUse() == 1);
                for (SocketChannel ch : stalled) {
                    String why = TestSupport.lastWord(ch, Status.PROTOCOL_ERROR);
                    assertTrue(why.contains("frame incomplete") && why.contains("frameReadTimeout"), why);
                }
                assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "not before the timeout");
            } finally {
                for (SocketChannel ch : stalled) {
                    ch.close();
                }
            }
            TestSupport.await("connections closed", Duration.ofSeconds(5), () -> server.metrics().connectionsActive() == 0);
            TestSupport.await("buffers back in the pool", Duration.ofSeconds(5),
                    () -> pool.chunksInUse() <= chunksBefore && pool.largeBuffersInUse() == 0);
            try (RpcClient c = RpcClient.connect(server.address())) {
                assertEquals("still serving", c.call(ECHO, "still serving"));
            }
        }
    }

    @Test
    void anIdleConnectionIsClosedAndOneWithACallInFlightIsNot() throws Exception {
        try (RpcServer server = server(cfg -> cfg.idleTimeout(Duration.ofMillis(500)));
             RpcClient busy = RpcClient.connect(server.address())) {
            assertEquals("warm", busy.call(ECHO, "warm")); // classes loaded: the next call follows at once
            CompletableFuture<String> call = busy.callAsync(SLEEP, 2000); // four idle timeouts long
            TestSupport.await("call in flight", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 1);
            long start = System.nanoTime();
            try (SocketChannel idle = TestSupport.open(server.address())) {
                String why = TestSupport.lastWord(idle, Status.SHUTTING_DOWN);
                assertTrue(why.contains("idle"), why);
            }
            long took = System.nanoTime() - start;
            assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(500) && took < TimeUnit.MILLISECONDS.toNanos(1900),
                    "closed after " + took + " ns");
            assertEquals("slept 2000", call.get(5, TimeUnit.SECONDS));
            // Now the client is idle too: the server closes it, and its next call says why.
            TestSupport.await("idle client closed", Duration.ofSeconds(5), () -> !busy.isOpen());
            // (the transport says closed a moment before the client has taken in the reason)
            TestSupport.await("the reason known", Duration.ofSeconds(5), () -> {
                RpcException e = assertThrows(RpcException.class, () -> busy.call(ECHO, "late"));
                assertEquals(Status.CONNECTION_CLOSED, e.status());
                return e.getMessage().contains("closed after") && e.getMessage().contains("idle");
            });
        }
    }

    @Test
    void clientConnectionsAreNotClosedForIdleness() throws Exception {
        try (RpcServer server = server(cfg -> cfg.idleTimeout(Duration.ZERO));
             RpcClient c = RpcClient.builder().address(server.address())
                     .tcp(cfg -> cfg.idleTimeout(Duration.ofMillis(100))).connect()) {
            assertEquals("a", c.call(ECHO, "a"));
            Thread.sleep(600);
            assertTrue(c.isOpen());
            assertEquals("b", c.call(ECHO, "b"));
        }
    }

    @Test
    void responsesToFramesBeforeABadHeaderAreDeliveredThenTheReason() throws Exception {
        try (RpcServer server = server(UnaryOperator.identity());
             SocketChannel ch = TestSupport.open(server.address())) {
            byte[] echo = TestSupport.requestFrame(5, ECHO.id(), "hi".getBytes(StandardCharsets.UTF_8), new byte[0]);
            byte[] sleep = TestSupport.requestFrame(6, SLEEP.id(), ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(200).array(), new byte[0]);
            byte[] bad = TestSupport.requestFrame(7, ECHO.id(), new byte[0], new byte[0]);
            bad[FrameDescriptor.VERSION_OFFSET] = 9;
            byte[] all = new byte[echo.length + sleep.length + bad.length];
            System.arraycopy(echo, 0, all, 0, echo.length);
            System.arraycopy(sleep, 0, all, echo.length, sleep.length);
            System.arraycopy(bad, 0, all, echo.length + sleep.length, bad.length);
            TestSupport.write(ch, all); // one write
            ByteBuffer r = TestSupport.readFrame(ch);
            assertNotNull(r, "the valid frame's response comes first");
            assertEquals(5, r.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
            assertEquals(0, r.getShort(FrameDescriptor.STATUS_OFFSET));
            r = TestSupport.readFrame(ch);
            assertNotNull(r, "so does the blocking call's, though it answers later");
            assertEquals(6, r.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
            assertEquals(0, r.getShort(FrameDescriptor.STATUS_OFFSET));
            String why = TestSupport.lastWord(ch, Status.PROTOCOL_ERROR);
            assertTrue(why.contains("unsupported protocol version"), why);
        }
    }

    @Test
    void aServerOutOfReceiveBuffersTellsTheClient() throws Exception {
        BufferPool.Config tiny = new BufferPool.Config().chunkSize(4096).slabSize(8192).maxPooledBytes(8192).maxLargeBytes(0);
        try (RpcServer small = server(cfg -> cfg.bufferPool(tiny));
             SocketChannel x = TestSupport.open(small.address());
             SocketChannel y = TestSupport.open(small.address())) {
            byte[] frame = TestSupport.requestFrame(1, ECHO.id(), new byte[100], new byte[0]);
            TestSupport.write(x, Arrays.copyOf(frame, 16)); // half a header each: both keep their receive chunk
            TestSupport.write(y, Arrays.copyOf(frame, 16));
            TestSupport.await("the pool's two chunks taken", Duration.ofSeconds(5), () -> small.bufferPool().chunksInUse() == 2);
            try (RpcClient b = RpcClient.connect(small.address())) {
                RpcException e = assertThrows(RpcException.class, () -> b.call(ECHO, "b"));
                assertTrue(e.status() == Status.RESOURCE_EXHAUSTED || e.status() == Status.CONNECTION_CLOSED, e::toString);
                assertTrue(e.getMessage().contains("no receive buffer"), e.getMessage());
                TestSupport.await("b closed", Duration.ofSeconds(5), () -> !b.isOpen());
            }
            x.close();
            y.close();
            TestSupport.await("the chunks back", Duration.ofSeconds(5), () -> small.bufferPool().chunksInUse() == 0);
            try (RpcClient a = RpcClient.connect(small.address())) {
                assertEquals("a", a.call(ECHO, "a"));
            }
        }
    }
}
