package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The asynchronous stream API over TCP: {@link AsyncClientStream} against blocking and asynchronous
 * servers, {@link AsyncStreamHandler} against blocking and asynchronous clients; order, flow control
 * with a slow consumer (bounded by the window, readiness and onReady), cancel both ways, the
 * deadline, errors, which threads the callbacks run on, and nothing held afterwards.
 */
@Timeout(120)
class AsyncStreamsTcpTest {
    /** Squares each number; blocking handler. */
    static final Method<Long, Long> SQUARES = Method.of("async.squares", Codecs.LONG, Codecs.LONG);
    /** Squares each number; asynchronous handler. */
    static final Method<Long, Long> ASYNC_SQUARES = Method.of("async.asyncSquares", Codecs.LONG, Codecs.LONG);
    /** Sends the number of 1 KiB messages it is asked for, as the window allows (asynchronous). */
    static final Method<Integer, byte[]> FLOOD = Method.of("async.flood", Codecs.INT, Codecs.BYTES);
    /** Never ends on its own (asynchronous); records how it ended. */
    static final Method<String, String> HANG = Method.of("async.hang", Codecs.STRING, Codecs.STRING);
    /** Blocking: waits in receive until stopped. */
    static final Method<String, String> BLOCKING_HANG = Method.of("async.blockingHang", Codecs.STRING, Codecs.STRING);
    /** Sends two messages, then fails with PERMISSION_DENIED and a trailer (asynchronous). */
    static final Method<String, String> FAILING = Method.of("async.failing", Codecs.STRING, Codecs.STRING);
    /** Sums what the client sends; answers at its half-close with a trailer (asynchronous). */
    static final Method<Long, Long> SUM = Method.of("async.sum", Codecs.LONG, Codecs.LONG);

    static final int WINDOW = FrameDescriptor.STREAM_INITIAL_WINDOW;

    private RpcServer server;
    private RpcClient client;
    private final AtomicLong flooded = new AtomicLong();
    private final AtomicInteger readyCalls = new AtomicInteger();
    private final AtomicReference<RpcException> hangEnd = new AtomicReference<>();
    private final CountDownLatch hangEnded = new CountDownLatch(1);
    private final CountDownLatch hangOpened = new CountDownLatch(1);
    private final CountDownLatch blockingStopped = new CountDownLatch(1);
    private final List<Boolean> handlerOnVirtual = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).streamWindowBytes(WINDOW)
                .registerStream(SQUARES, s -> {
                    for (Long x; (x = s.receive()) != null; ) {
                        s.send(x * x);
                    }
                })
                .registerStream(ASYNC_SQUARES, (AsyncStreamHandler<Long, Long>) s -> {
                    handlerOnVirtual.add(Thread.currentThread().isVirtual());
                    s.request(1);
                    return new StreamListener<>() {
                        @Override
                        public void onMessage(Long x) {
                            handlerOnVirtual.add(Thread.currentThread().isVirtual());
                            s.send(x * x);
                            s.request(1);
                        }

                        @Override
                        public void onHalfClose() {
                            s.close(Metadata.EMPTY.with("t", "squared"));
                        }

                        @Override
                        public void onEnd(RpcException failure, Metadata metadata) {
                        }
                    };
                })
                .registerStream(FLOOD, (AsyncStreamHandler<Integer, byte[]>) s -> {
                    s.request(1);
                    return new StreamListener<>() {
                        int left = -1;

                        @Override
                        public void onMessage(Integer n) {
                            left = n;
                            pump();
                        }

                        @Override
                        public void onReady() {
                            readyCalls.incrementAndGet();
                            pump();
                        }

                        private void pump() {
                            while (left > 0 && s.isReady()) {
                                s.send(new byte[1024]);
                                flooded.incrementAndGet();
                                left--;
                            }
                            if (left == 0) {
                                left = -1;
                                s.close(Metadata.EMPTY);
                            }
                        }

                        @Override
                        public void onEnd(RpcException failure, Metadata metadata) {
                        }
                    };
                })
                .registerStream(HANG, (AsyncStreamHandler<String, String>) s -> new StreamListener<>() {
                    {
                        hangOpened.countDown();
                    }

                    @Override
                    public void onMessage(String m) {
                    }

                    @Override
                    public void onEnd(RpcException failure, Metadata metadata) {
                        hangEnd.set(failure);
                        hangEnded.countDown();
                    }
                })
                .registerStream(BLOCKING_HANG, s -> {
                    try {
                        s.receive();
                    } finally {
                        blockingStopped.countDown();
                    }
                })
                .registerStream(FAILING, (AsyncStreamHandler<String, String>) s -> {
                    s.send("one");
                    s.send("two");
                    s.fail(new RpcException(Status.PERMISSION_DENIED, "no third")
                            .withMetadata(Metadata.EMPTY.with("why", "policy")));
                    return new Quiet<>();
                })
                .registerStream(SUM, (AsyncStreamHandler<Long, Long>) s -> {
                    s.request(Integer.MAX_VALUE);
                    return new StreamListener<>() {
                        long sum;

                        @Override
                        public void onMessage(Long x) {
                            sum += x;
                        }

                        @Override
                        public void onHalfClose() {
                            s.send(sum);
                            s.close(Metadata.EMPTY.with("t", "summed"));
                        }

                        @Override
                        public void onEnd(RpcException failure, Metadata metadata) {
                        }
                    };
                })
                .start();
        client = RpcClient.builder().address(server.address()).streamWindowBytes(WINDOW).connect();
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            TestSupport.await("server calls over", Duration.ofSeconds(10), () -> server.metrics().inFlight() == 0);
            server.close();
        }
    }

    /** Listens without doing anything. */
    static class Quiet<T> implements StreamListener<T> {
        @Override
        public void onMessage(T message) {
        }

        @Override
        public void onEnd(RpcException failure, Metadata metadata) {
        }
    }

    /** Records what a client stream receives. */
    static final class Recorder<T> implements StreamListener<T> {
        final List<T> messages = new CopyOnWriteArrayList<>();
        final CompletableFuture<RpcException> ended = new CompletableFuture<>();
        final AtomicReference<Metadata> endMetadata = new AtomicReference<>();
        final AtomicInteger ready = new AtomicInteger();
        final AtomicBoolean overlapped = new AtomicBoolean();
        final AtomicBoolean afterEnd = new AtomicBoolean();
        final List<Boolean> onVirtual = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        private final AtomicInteger inside = new AtomicInteger();

        private void enter() {
            if (inside.incrementAndGet() != 1) {
                overlapped.set(true);
            }
            if (ended.isDone()) {
                afterEnd.set(true);
            }
            onVirtual.add(Thread.currentThread().isVirtual());
            threads.add(Thread.currentThread().getName());
        }

        @Override
        public void onMessage(T message) {
            enter();
            messages.add(message);
            inside.decrementAndGet();
        }

        @Override
        public void onReady() {
            enter();
            ready.incrementAndGet();
            inside.decrementAndGet();
        }

        @Override
        public void onEnd(RpcException failure, Metadata metadata) {
            enter();
            endMetadata.set(metadata);
            inside.decrementAndGet();
            ended.complete(failure);
        }

        RpcException awaitEnd() throws Exception {
            return ended.get(30, TimeUnit.SECONDS);
        }
    }

    private static CallOptions noDeadline() {
        return CallOptions.DEFAULT.withoutDeadline();
    }

    @Test
    void anAsyncClientGetsABlockingServersMessagesInOrderAndItsEnd() throws Exception {
        Recorder<Long> r = new Recorder<>();
        AsyncClientStream<Long, Long> s = client.openAsyncStream(SQUARES, noDeadline(), r);
        int n = 20_000;
        s.request(n);
        for (long i = 0; i < n; i++) {
            s.send(i); // never waits: what the window does not take waits in the stream
        }
        s.halfClose();
        assertNull(r.awaitEnd());
        assertEquals(n, r.messages.size());
        for (int i = 0; i < n; i++) {
            assertEquals((long) i * i, r.messages.get(i));
        }
        assertFalse(r.overlapped.get(), "callbacks overlapped");
        assertFalse(r.afterEnd.get(), "a callback after the end");
        assertTrue(r.ready.get() >= 1, "onReady at the start");
        assertFalse(r.onVirtual.contains(true), "a callback on a virtual thread: " + r.threads);
        assertTrue(s.isDone());
    }

    @Test
    void anAsyncServerAnswersABlockingClientWithoutAThreadOfItsOwn() {
        try (ClientStream<Long, Long> s = client.openStream(ASYNC_SQUARES, noDeadline())) {
            for (long i = 1; i <= 1000; i++) {
                s.send(i);
                assertEquals(i * i, s.receive());
            }
            s.halfClose();
            assertNull(s.receive());
            assertEquals("squared", s.trailers().get("t"));
        }
        assertFalse(handlerOnVirtual.isEmpty());
        assertFalse(handlerOnVirtual.contains(true), "the async handler ran on a virtual thread");
    }

    @Test
    void asyncOnBothEndsCarriesTrailers() throws Exception {
        Recorder<Long> r = new Recorder<>();
        AsyncClientStream<Long, Long> s = client.openAsyncStream(SUM, noDeadline(), r);
        s.request(1);
        for (long i = 1; i <= 100; i++) {
            s.send(i);
        }
        s.halfClose();
        assertThrows(IllegalStateException.class, () -> s.send(1L));
        assertNull(r.awaitEnd());
        assertEquals(List.of(5050L), r.messages);
        assertEquals("summed", r.endMetadata.get().get("t"));
    }

    /**
     * A slow consumer: the server sends only while ready, the client asks for one message at a
     * time and takes its time. The server never runs more than the window ahead of the reader, it
     * is told onReady as the reader's grants come, and every message arrives.
     */
    @Test
    void aSlowConsumerHoldsBackAnAsyncSenderByItsWindow() throws Exception {
        int n = 400; // 400 KiB through a 64 KiB window
        Recorder<byte[]> r = new Recorder<>();
        AsyncClientStream<Integer, byte[]> s = client.openAsyncStream(FLOOD, noDeadline(), r);
        s.send(n);
        s.halfClose();
        long maxAhead = 0;
        for (int i = 0; i < n; i++) {
            s.request(1);
            int want = i + 1;
            TestSupport.await("message " + want, Duration.ofSeconds(10), () -> r.messages.size() >= want);
            if (i % 50 == 0) {
                Thread.sleep(20); // the reader dawdles: the sender must stop at the window
            }
            maxAhead = Math.max(maxAhead, flooded.get() - r.messages.size());
        }
        assertNull(r.awaitEnd());
        assertEquals(n, r.messages.size());
        int perWindow = WINDOW / (1024 + FrameDescriptor.HEADER_LENGTH);
        assertTrue(maxAhead <= perWindow + 2, "the sender ran " + maxAhead + " messages ahead, window holds " + perWindow);
        assertTrue(readyCalls.get() >= 2, "onReady as the window opened: " + readyCalls.get());
    }

    @Test
    void aClientCancelReachesAnAsyncServer() throws Exception {
        Recorder<String> r = new Recorder<>();
        AsyncClientStream<String, String> s = client.openAsyncStream(HANG, noDeadline(), r);
        s.send("x");
        assertTrue(hangOpened.await(10, TimeUnit.SECONDS));
        s.cancel();
        assertEquals(Status.CANCELLED, r.awaitEnd().status());
        assertTrue(hangEnded.await(10, TimeUnit.SECONDS));
        assertEquals(Status.CANCELLED, hangEnd.get().status());
        assertTrue(s.isDone());
    }

    @Test
    void aClientCancelReachesABlockingServer() throws Exception {
        Recorder<String> r = new Recorder<>();
        AsyncClientStream<String, String> s = client.openAsyncStream(BLOCKING_HANG, noDeadline(), r);
        s.request(1);
        Thread.sleep(100);
        s.cancel();
        assertEquals(Status.CANCELLED, r.awaitEnd().status());
        assertTrue(blockingStopped.await(10, TimeUnit.SECONDS), "the blocking handler was not stopped");
    }

    @Test
    void aServerFailureComesAfterItsMessagesWithItsMetadata() throws Exception {
        Recorder<String> r = new Recorder<>();
        AsyncClientStream<String, String> s = client.openAsyncStream(FAILING, noDeadline(), r);
        s.request(10);
        RpcException e = r.awaitEnd();
        assertNotNull(e);
        assertEquals(Status.PERMISSION_DENIED, e.status());
        assertTrue(e.getMessage().contains("no third"), e.getMessage());
        assertEquals("policy", r.endMetadata.get().get("why"));
        assertEquals(List.of("one", "two"), r.messages);
    }

    /** Unrequested messages are not told, and neither is the end that comes after them. */
    @Test
    void nothingIsToldBeforeItIsRequested() throws Exception {
        Recorder<String> r = new Recorder<>();
        client.openAsyncStream(FAILING, noDeadline(), r).request(1);
        TestSupport.await("first message", Duration.ofSeconds(10), () -> r.messages.size() == 1);
        Thread.sleep(200);
        assertEquals(List.of("one"), r.messages);
        assertFalse(r.ended.isDone(), "the end was told before the messages before it");
    }

    @Test
    void theDeadlineEndsBothSides() throws Exception {
        Recorder<String> r = new Recorder<>();
        client.openAsyncStream(HANG, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)), r);
        assertEquals(Status.DEADLINE_EXCEEDED, r.awaitEnd().status());
        assertTrue(hangEnded.await(10, TimeUnit.SECONDS));
        assertEquals(Status.DEADLINE_EXCEEDED, hangEnd.get().status());
    }

    @Test
    void aThrowingListenerCancelsItsStream() throws Exception {
        CompletableFuture<RpcException> ended = new CompletableFuture<>();
        AsyncClientStream<Long, Long> s = client.openAsyncStream(ASYNC_SQUARES, noDeadline(), new StreamListener<Long>() {
            @Override
            public void onMessage(Long message) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onEnd(RpcException failure, Metadata metadata) {
                ended.complete(failure);
            }
        });
        s.request(1);
        s.send(3L);
        assertEquals(Status.CANCELLED, ended.get(10, TimeUnit.SECONDS).status());
    }

    @Test
    void aMessageOverTheFrameLimitIsRefusedAtSend() throws Exception {
        Method<byte[], byte[]> echo = Method.of("async.none", Codecs.BYTES, Codecs.BYTES);
        Recorder<byte[]> r = new Recorder<>();
        AsyncClientStream<byte[], byte[]> s = client.openAsyncStream(echo, noDeadline(), r);
        RpcException e = assertThrows(RpcException.class, () -> s.send(new byte[64 << 20]));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        s.halfClose();
        assertEquals(Status.UNKNOWN_METHOD, r.awaitEnd().status()); // the server does not know it
    }

    @Test
    void callbacksRunOnTheGivenExecutor() throws Exception {
        ExecutorService ex = Executors.newSingleThreadExecutor(t -> new Thread(t, "the-callers-executor"));
        try {
            Recorder<Long> r = new Recorder<>();
            AsyncClientStream<Long, Long> s = client.openAsyncStream(ASYNC_SQUARES, noDeadline(), r, ex);
            s.request(100);
            for (long i = 0; i < 100; i++) {
                s.send(i);
            }
            s.halfClose();
            assertNull(r.awaitEnd());
            assertEquals(100, r.messages.size());
            assertTrue(r.threads.stream().allMatch("the-callers-executor"::equals), r.threads.toString());
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void manyStreamsAtOnceEachInOrder() throws Exception {
        int streams = 200;
        List<Recorder<Long>> rs = new CopyOnWriteArrayList<>();
        for (int k = 0; k < streams; k++) {
            Recorder<Long> r = new Recorder<>();
            rs.add(r);
            AsyncClientStream<Long, Long> s = client.openAsyncStream(k % 2 == 0 ? ASYNC_SQUARES : SQUARES, noDeadline(), r);
            s.request(50);
            for (long i = 0; i < 50; i++) {
                s.send(i + k);
            }
            s.halfClose();
        }
        for (int k = 0; k < streams; k++) {
            Recorder<Long> r = rs.get(k);
            assertNull(r.awaitEnd());
            for (int i = 0; i < 50; i++) {
                long x = i + k;
                assertEquals(x * x, r.messages.get(i));
            }
        }
        TestSupport.await("client slots free", Duration.ofSeconds(10), () -> client.metrics().inFlight() == 0);
    }

    private static byte[] frame(int type, int flags, long id, int methodId, byte[] payload) {
        byte[] f = new byte[FrameDescriptor.HEADER_LENGTH + payload.length];
        new dev.rdmarpc.rpc.protocol.FrameHeaderEncoder().wrap(java.lang.foreign.MemorySegment.ofArray(f), 0).type(type)
                .flags(flags).requestId(id).methodId(methodId).payloadLength(payload.length);
        System.arraycopy(payload, 0, f, FrameDescriptor.HEADER_LENGTH, payload.length);
        return f;
    }

    /**
     * A client that sends past the window an asynchronous handler granted (it requested nothing):
     * the stream fails with PROTOCOL_ERROR, which the client gets as the stream's end and the
     * handler's listener as its end; the connection goes on.
     */
    @Test
    void aPeerPastItsWindowLosesItsAsyncStreamNotTheConnection() throws Exception {
        try (java.nio.channels.SocketChannel ch = TestSupport.open(server.address())) {
            int hang = HANG.id();
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_REQUEST, FrameDescriptor.FLAG_STREAM, 1, hang, new byte[0]));
            byte[] kib = new byte[1024];
            int allowed = WINDOW / (FrameDescriptor.HEADER_LENGTH + kib.length) + 1;
            for (int i = 0; i < allowed + 40; i++) {
                TestSupport.write(ch, frame(FrameDescriptor.TYPE_STREAM_MESSAGE, 0, 1, hang, kib));
            }
            java.nio.ByteBuffer end;
            while (true) {
                end = TestSupport.readFrame(ch);
                if (end == null) {
                    throw new AssertionError("closed before the stream's end");
                }
                if (end.get(FrameDescriptor.TYPE_OFFSET) == FrameDescriptor.TYPE_RESPONSE
                        && end.getLong(FrameDescriptor.REQUEST_ID_OFFSET) == 1) {
                    break;
                }
            }
            assertEquals(Status.PROTOCOL_ERROR.code(), end.getShort(FrameDescriptor.STATUS_OFFSET));
            assertTrue(hangEnded.await(10, TimeUnit.SECONDS));
            assertEquals(Status.PROTOCOL_ERROR, hangEnd.get().status());
            // the connection goes on: a stream after it works
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_REQUEST, FrameDescriptor.FLAG_STREAM, 2, SUM.id(), new byte[0]));
            TestSupport.write(ch, frame(FrameDescriptor.TYPE_STREAM_MESSAGE, FrameDescriptor.FLAG_END_STREAM, 2, SUM.id(),
                    new byte[0]));
            while (true) {
                java.nio.ByteBuffer f = TestSupport.readFrame(ch);
                if (f == null) {
                    throw new AssertionError("the connection closed");
                }
                if (f.get(FrameDescriptor.TYPE_OFFSET) == FrameDescriptor.TYPE_RESPONSE
                        && f.getLong(FrameDescriptor.REQUEST_ID_OFFSET) == 2) {
                    assertEquals(0, f.getShort(FrameDescriptor.STATUS_OFFSET));
                    break;
                }
            }
        }
    }
}
