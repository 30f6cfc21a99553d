package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FaultTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> FAIL = Method.of("fail", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> FAIL_BLOCKING = Method.of("failBlocking", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> STATUS = Method.of("status", Codecs.STRING, Codecs.STRING);
    static final Method<Integer, String> SLEEP = Method.of("sleep", Codecs.INT, Codecs.STRING);
    static final Method<Integer, byte[]> BIG = Method.of("big", Codecs.INT, Codecs.BYTES);
    static final Method<String, String> MISSING = Method.of("missing", Codecs.STRING, Codecs.STRING);
    static final Method<MemorySegment, MemorySegment> RAW_SILENT = Method.raw("rawSilent");

    RpcServer server;
    CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() {
        server = RpcServer.builder()
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .maxFrameLength(1 << 20)
                .register(ECHO, (ctx, s) -> s)
                .register(FAIL, (ctx, s) -> {
                    throw new IllegalStateException("boom: " + s);
                })
                .registerBlocking(FAIL_BLOCKING, (ctx, s) -> {
                    throw new UnsupportedOperationException();
                })
                .register(STATUS, (ctx, s) -> {
                    throw new RpcException(Status.RESOURCE_EXHAUSTED, "no more " + s);
                })
                .registerBlocking(SLEEP, (ctx, ms) -> {
                    if (ms < 0) {
                        release.await();
                    } else {
                        Thread.sleep(ms);
                    }
                    return "slept";
                })
                .register(BIG, (ctx, n) -> new byte[n])
                .registerRaw(RAW_SILENT, call -> {
                })
                .start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.close();
    }

    private RpcClient client() {
        return RpcClient.builder().address(server.address()).maxFrameLength(1 << 20).connect();
    }

    private static RpcException expect(Status status, Runnable call) {
        RpcException e = assertThrows(RpcException.class, call::run);
        assertEquals(status, e.status(), e::toString);
        return e;
    }

    @Test
    void unknownMethodAndThrowingHandlersGiveErrorsNotDroppedConnections() {
        try (RpcClient c = client()) {
            expect(Status.UNKNOWN_METHOD, () -> c.call(MISSING, "x"));
            RpcException e = expect(Status.HANDLER_FAILED, () -> c.call(FAIL, "x"));
            assertEquals("boom: x", e.getMessage());
            e = expect(Status.HANDLER_FAILED, () -> c.call(FAIL_BLOCKING, "x"));
            assertEquals(UnsupportedOperationException.class.getName(), e.getMessage());
            e = expect(Status.RESOURCE_EXHAUSTED, () -> c.call(STATUS, "cake"));
            assertEquals("no more cake", e.getMessage());
            e = expect(Status.HANDLER_FAILED, () -> c.call(RAW_SILENT, MemorySegment.ofArray(new byte[1])));
            assertTrue(e.getMessage().contains("without responding"), e.getMessage());
            assertEquals("still here", c.call(ECHO, "still here"));
            assertTrue(c.isOpen());
            assertEquals(1, server.metrics().connectionsActive());
        }
    }

    @Test
    void badRequestPayloadIsAProtocolErrorOfThatCallOnly() {
        try (RpcClient c = client()) {
            Method<String, String> wrongShape = Method.of("sleep", Codecs.STRING, Codecs.STRING); // server wants 4 bytes
            expect(Status.PROTOCOL_ERROR, () -> c.call(wrongShape, "not an int"));
            assertEquals("ok", c.call(ECHO, "ok"));
        }
    }

    @Test
    void malformedFramesCloseOnlyTheOffendingConnection() throws Exception {
        try (RpcClient good = client()) {
            assertEquals("a", good.call(ECHO, "a"));
            List<byte[]> bad = new ArrayList<>();
            byte[] wrongMagic = TestSupport.requestFrame(1, ECHO.id(), "x".getBytes(StandardCharsets.UTF_8), new byte[0]);
            wrongMagic[0] ^= 0x55;
            bad.add(wrongMagic);
            byte[] wrongVersion = TestSupport.requestFrame(1, ECHO.id(), new byte[0], new byte[0]);
            wrongVersion[FrameDescriptor.VERSION_OFFSET] = 9;
            bad.add(wrongVersion);
            byte[] oversized = TestSupport.requestFrame(1, ECHO.id(), new byte[0], new byte[0]);
            ByteBuffer.wrap(oversized).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET, 2 << 20);
            bad.add(oversized);
            byte[] negative = TestSupport.requestFrame(1, ECHO.id(), new byte[0], new byte[0]);
            ByteBuffer.wrap(negative).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(FrameDescriptor.ATTACHMENT_LENGTH_OFFSET, -5);
            bad.add(negative);
            byte[] response = TestSupport.requestFrame(1, ECHO.id(), new byte[0], new byte[0]);
            response[FrameDescriptor.TYPE_OFFSET] = FrameDescriptor.TYPE_RESPONSE;
            bad.add(response);
            byte[] reserved = TestSupport.requestFrame(1, ECHO.id(), new byte[0], new byte[0]);
            reserved[FrameDescriptor.FLAGS_OFFSET] = 8; // bits 0 to 2 are FLAG_METADATA, FLAG_STREAM, FLAG_END_STREAM; bit 3 is reserved
            bad.add(reserved);
            long protocolErrorsBefore = server.metrics().protocolErrors();
            for (byte[] frame : bad) {
                try (SocketChannel ch = TestSupport.open(server.address())) {
                    TestSupport.write(ch, frame);
                    assertTrue(TestSupport.closedByPeer(ch), "server should close the connection");
                }
                assertEquals("still serving", good.call(ECHO, "still serving"));
            }
            TestSupport.await("protocol errors counted", Duration.ofSeconds(5),
                    () -> server.metrics().protocolErrors() >= protocolErrorsBefore + bad.size());
        }
    }

    @Test
    void truncatedFrameThenCloseLeavesServerHealthy() throws Exception {
        long chunksBefore = server.bufferPool().chunksInUse();
        byte[] frame = TestSupport.requestFrame(7, ECHO.id(), new byte[1000], new byte[0]);
        for (int cut : new int[]{3, 20, 31, 32, 500, frame.length - 1}) {
            try (SocketChannel ch = TestSupport.open(server.address())) {
                TestSupport.write(ch, java.util.Arrays.copyOf(frame, cut));
            }
        }
        try (RpcClient c = client()) {
            assertEquals("fine", c.call(ECHO, "fine"));
        }
        TestSupport.await("connections closed", Duration.ofSeconds(5), () -> server.metrics().connectionsActive() == 0);
        TestSupport.await("receive buffers released", Duration.ofSeconds(5),
                () -> server.bufferPool().chunksInUse() <= chunksBefore);
    }

    @Test
    void rawSocketGetsWellFormedErrorResponse() throws Exception {
        try (SocketChannel ch = TestSupport.open(server.address())) {
            TestSupport.write(ch, TestSupport.requestFrame(42, 12345, new byte[3], new byte[0]));
            ByteBuffer resp = TestSupport.readFrame(ch);
            assertNotNull(resp);
            assertEquals(FrameDescriptor.MAGIC, resp.getInt(0));
            assertEquals(FrameDescriptor.TYPE_RESPONSE, resp.get(FrameDescriptor.TYPE_OFFSET));
            assertEquals(42, resp.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
            assertEquals(Status.UNKNOWN_METHOD.code(), resp.getShort(FrameDescriptor.STATUS_OFFSET));
        }
    }

    @Test
    void pendingCallsFailPromptlyWhenTheServerDies() throws Exception {
        RpcClient c = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofSeconds(60)).connect();
        try {
            List<CompletableFuture<String>> pending = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                pending.add(c.callAsync(SLEEP, -1));
            }
            TestSupport.await("calls in flight", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 20);
            long start = System.nanoTime();
            server.shutdown(Duration.ZERO); // dies with calls in flight
            for (CompletableFuture<String> f : pending) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
                assertEquals(Status.CONNECTION_CLOSED, ((RpcException) e.getCause()).status());
            }
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3), "failed promptly, not after the timeout");
            assertFalse(c.isOpen());
            expect(Status.CONNECTION_CLOSED, () -> c.call(ECHO, "after"));
            expect(Status.CONNECTION_CLOSED, () -> c.send(RAW_SILENT, MemorySegment.ofArray(new byte[1]), NOOP, 0));
        } finally {
            c.close();
        }
    }

    @Test
    void timeoutsPerCallAndDefault() {
        try (RpcClient c = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofMillis(150)).connect()) {
            long t0 = System.nanoTime();
            expect(Status.DEADLINE_EXCEEDED, () -> c.call(SLEEP, 2000, Duration.ofMillis(100)));
            long took = System.nanoTime() - t0;
            assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(100) && took < TimeUnit.MILLISECONDS.toNanos(1500), "took " + took);
            expect(Status.DEADLINE_EXCEEDED, () -> c.call(SLEEP, 2000));
            assertEquals("slept", c.call(SLEEP, 1, Duration.ofSeconds(5)));
            assertEquals(2, c.metrics().timeouts());
            assertEquals(0, c.outstanding());
        }
    }

    /**
     * The timeout scan runs only once the earliest deadline has passed, and must still see every
     * call: a short timeout started after a long one, and one started after an expired call's slot
     * was reused, each fire on time while the long call stays pending.
     */
    @Test
    void aShortTimeoutBehindALongOneFiresOnTime() throws Exception {
        try (RpcClient c = RpcClient.builder().address(server.address()).maxOutstanding(65536).connect()) {
            CompletableFuture<String> longCall =
                    c.callAsync(SLEEP, -1, CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
            for (int round = 0; round < 3; round++) {
                long t0 = System.nanoTime();
                CompletableFuture<String> shortCall =
                        c.callAsync(SLEEP, -1, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100)));
                ExecutionException e = assertThrows(ExecutionException.class, () -> shortCall.get(5, TimeUnit.SECONDS));
                long took = System.nanoTime() - t0;
                assertEquals(Status.DEADLINE_EXCEEDED, ((RpcException) e.getCause()).status());
                assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(100) && took < TimeUnit.MILLISECONDS.toNanos(1500),
                        "round " + round + " took " + took);
                assertFalse(longCall.isDone(), "the long call is still pending");
            }
            assertEquals(3, c.metrics().timeouts());
            assertEquals(1, c.outstanding());
        }
    }

    @Test
    void payloadTooLargeBeforeAnythingIsSent() {
        try (RpcClient c = client()) {
            long serverCalls = server.metrics().calls();
            long sent = c.metrics().bytesSent();
            RpcException e = expect(Status.PAYLOAD_TOO_LARGE, () -> c.call(ECHO, "x".repeat(1 << 20)));
            assertTrue(e.getMessage().contains("maximum frame length"));
            expect(Status.PAYLOAD_TOO_LARGE, () -> c.send(RAW_SILENT, MemorySegment.ofArray(new byte[1 << 20]), NOOP, 0));
            assertEquals(sent, c.metrics().bytesSent());
            assertEquals(serverCalls, server.metrics().calls());
            // A response too large for the frame limit becomes an error response.
            expect(Status.PAYLOAD_TOO_LARGE, () -> c.call(BIG, 2 << 20));
            assertEquals(1000, c.call(BIG, 1000).length);
        }
    }

    @Test
    void boundedOutstandingCallsGiveOverloaded() throws Exception {
        try (RpcClient c = RpcClient.builder().address(server.address()).maxOutstanding(2).connect()) {
            CompletableFuture<String> a = c.callAsync(SLEEP, -1);
            CompletableFuture<String> b = c.callAsync(SLEEP, -1);
            CompletableFuture<String> over = c.callAsync(ECHO, "no room");
            ExecutionException e = assertThrows(ExecutionException.class, () -> over.get(1, TimeUnit.SECONDS));
            assertEquals(Status.OVERLOADED, ((RpcException) e.getCause()).status());
            assertFalse(c.send(RAW_SILENT, MemorySegment.ofArray(new byte[1]), NOOP, 0));
            expect(Status.OVERLOADED, () -> c.call(ECHO, "waits, then gives up", Duration.ofMillis(100)));
            // A blocking call waits for a slot instead of failing at once.
            CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> c.call(ECHO, "waited", Duration.ofSeconds(5)),
                    r -> Thread.ofVirtual().start(r));
            Thread.sleep(50);
            assertFalse(waiting.isDone());
            release.countDown();
            assertEquals("slept", a.get(5, TimeUnit.SECONDS));
            assertEquals("slept", b.get(5, TimeUnit.SECONDS));
            assertEquals("waited", waiting.get(5, TimeUnit.SECONDS));
            assertTrue(c.metrics().rejected() >= 3);
        }
    }

    @Test
    void exhaustedBufferPoolGivesResourceExhausted() {
        BufferPool.Config tiny = new BufferPool.Config().chunkSize(4096).slabSize(8192).maxPooledBytes(8192).maxLargeBytes(0);
        try (RpcClient c = RpcClient.builder().address(server.address()).tcp(cfg -> cfg.bufferPool(tiny)).connect()) {
            assertEquals("small", c.call(ECHO, "small"));
            // Needs a large buffer; the pool has no budget for one.
            RpcException e = expect(Status.RESOURCE_EXHAUSTED, () -> c.call(ECHO, "y".repeat(10_000)));
            assertTrue(e.getMessage().contains("exhausted"));
            assertTrue(c.bufferPool().acquireFailures() > 0);
            assertEquals(0, c.outstanding());
            assertEquals("still fine", c.call(ECHO, "still fine"));
        }
    }

    @Test
    void serverWithExhaustedPoolClosesWithAReasonAndKeepsOthersServed() {
        BufferPool.Config tiny = new BufferPool.Config().chunkSize(4096).slabSize(8192).maxPooledBytes(8192).maxLargeBytes(0);
        try (RpcServer small = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).bufferPool(tiny)).register(ECHO, (ctx, s) -> s).start();
             RpcClient a = RpcClient.connect(small.address())) {
            assertEquals("a", a.call(ECHO, "a")); // uses both chunks: receive + send
            // A frame bigger than a chunk needs a large buffer the pool does not have: that connection
            // closes, and the client hears why.
            RpcException e = expect(Status.RESOURCE_EXHAUSTED, () -> a.call(ECHO, "z".repeat(6000)));
            assertTrue(e.getMessage().contains("no buffer for a frame of"), e.getMessage());
            TestSupport.await("a closed", Duration.ofSeconds(5), () -> !a.isOpen());
            expect(Status.CONNECTION_CLOSED, () -> a.call(ECHO, "after"));
            try (RpcClient b = RpcClient.connect(small.address())) {
                assertEquals("b", b.call(ECHO, "b"));
            }
        }
    }

    static final ResponseListener NOOP = new ResponseListener() {
        @Override
        public void onResponse(long tag, ResponseView response) {
        }

        @Override
        public void onError(long tag, RpcException error) {
        }
    };

    @Test
    void blockingCallOnTheClientsOwnIoThreadIsRefused() throws Exception {
        try (RpcClient c = client()) {
            CompletableFuture<Throwable> seen = new CompletableFuture<>();
            Thread test = Thread.currentThread();
            // A response that takes 100 ms: the callback is attached long before it completes, so it runs on
            // the client's I/O thread (a response that came back first would run it here, on the test thread).
            c.callAsync(SLEEP, 100).whenComplete((r, e) -> {
                if (Thread.currentThread() == test) {
                    seen.completeExceptionally(new AssertionError("the callback ran on the test thread"));
                    return;
                }
                try {
                    c.call(ECHO, "nested"); // runs on the client's I/O thread
                    seen.complete(null);
                } catch (Throwable t) {
                    seen.complete(t);
                }
            });
            assertInstanceOf(IllegalStateException.class, seen.get(5, TimeUnit.SECONDS));
            assertEquals("ok", c.call(ECHO, "ok"));
        }
    }

    @Test
    void connectFailureIsUnavailable() throws Exception {
        InetSocketAddress dead;
        try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            dead = (InetSocketAddress) s.getLocalSocketAddress();
        }
        InetSocketAddress target = dead;
        expect(Status.UNAVAILABLE, () -> RpcClient.connect(target));
    }
}
