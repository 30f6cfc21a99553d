package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Streaming calls end to end: the three shapes, half-close, errors after messages, cancel and
 * deadline reaching the handler, per-stream flow control (a reader that stops holds back its own
 * writer only, and what it holds stays within its window plus one message), many streams at once,
 * a stream of large messages and one of very many small ones; nothing left behind.
 *
 * <p>Subclassed per transport (TCP on the host, RDMA in the Soft-RoCE VM); the test and lifecycle
 * methods are public so that the RDMA subclass in another package runs them.
 */
public abstract class StreamsContract {
    /** The client sends numbers; the server answers each with its square, then ends. */
    static final Method<Long, Long> SQUARES = Method.of("streams.squares", Codecs.LONG, Codecs.LONG);
    /** Server streaming: the client sends a count, the server sends that many numbers 0..n-1. */
    static final Method<Integer, Integer> COUNT = Method.of("streams.count", Codecs.INT, Codecs.INT);
    /** Client streaming: the server sums what the client sends and answers the sum once it half-closed. */
    static final Method<Long, Long> SUM = Method.of("streams.sum", Codecs.LONG, Codecs.LONG);
    /** Bidirectional echo of byte arrays. */
    static final Method<byte[], byte[]> ECHO_BYTES = Method.of("streams.echoBytes", Codecs.BYTES, Codecs.BYTES);
    /** Sends 1 KiB messages until it cannot (counted in {@link #produced}), or until stopped. */
    static final Method<Void, byte[]> FLOOD = Method.of("streams.flood", Codecs.VOID, Codecs.BYTES);
    /** Reads nothing until {@link #drainNow}; then reads everything and answers how many. */
    static final Method<byte[], Integer> SINK = Method.of("streams.sink", Codecs.BYTES, Codecs.INT);
    /** Sends three messages, then fails with PERMISSION_DENIED. */
    static final Method<Void, String> FAILING = Method.of("streams.failing", Codecs.VOID, Codecs.STRING);
    /** Waits in receive until stopped; records what stopped it. */
    static final Method<String, String> WAITING = Method.of("streams.waiting", Codecs.STRING, Codecs.STRING);
    /** Echoes the opening's metadata value "k" as a message and as trailer "t". */
    static final Method<Void, String> METADATA = Method.of("streams.metadata", Codecs.VOID, Codecs.STRING);
    /** A unary method, for the mismatch cases. */
    static final Method<String, String> UNARY = Method.of("streams.unary", Codecs.STRING, Codecs.STRING);

    /** The window of the servers and clients of the flow-control tests. */
    static final int SMALL_WINDOW = FrameDescriptor.STREAM_INITIAL_WINDOW;

    final AtomicLong produced = new AtomicLong();
    final CountDownLatch drainNow = new CountDownLatch(1);
    final AtomicReference<Throwable> stoppedWith = new AtomicReference<>();
    final CountDownLatch waitingStarted = new CountDownLatch(1);
    final CountDownLatch waitingStopped = new CountDownLatch(1);
    RpcServer server;
    RpcClient client;

    /** @return a server builder of this transport, bound, not started */
    protected abstract RpcServer.Builder serverBuilder();

    /** @return a client builder of this transport with {@code server}'s address */
    protected abstract RpcClient.Builder clientBuilder(RpcServer server);

    /** @return messages in {@link #aStreamOfManySmallMessagesWorks} (a million on the host) */
    protected abstract int manySmallMessages();

    /**
     * @return the deadline of {@link #theDeadlineEndsBothSides}: long enough for the opening to reach
     *         the handler before it (a handler whose deadline passed before it started never runs)
     */
    protected abstract Duration streamDeadline();

    /** @return messages of 1 MiB in {@link #aStreamOfLargeMessagesWorks} */
    protected abstract int largeMessages();

    @BeforeEach
    public void start() {
        server = serverBuilder().streamWindowBytes(SMALL_WINDOW)
                .register(UNARY, (ctx, s) -> s + "!")
                .registerStream(SQUARES, s -> {
                    for (Long x; (x = s.receive()) != null; ) {
                        s.send(x * x);
                    }
                })
                .registerStream(COUNT, s -> {
                    int n = s.receive();
                    for (int i = 0; i < n; i++) {
                        s.send(i);
                    }
                })
                .registerStream(SUM, s -> {
                    long sum = 0;
                    for (Long x; (x = s.receive()) != null; ) {
                        sum += x;
                    }
                    s.send(sum);
                })
                .registerStream(ECHO_BYTES, s -> {
                    for (byte[] b; (b = s.receive()) != null; ) {
                        s.send(b);
                    }
                })
                .registerStream(FLOOD, s -> {
                    byte[] kib = new byte[1024];
                    try {
                        while (true) {
                            s.send(kib);
                            produced.incrementAndGet();
                        }
                    } catch (RpcException e) {
                        stoppedWith.set(e);
                        throw e;
                    }
                })
                .registerStream(SINK, s -> {
                    drainNow.await(60, TimeUnit.SECONDS);
                    int n = 0;
                    while (s.receive() != null) {
                        n++;
                    }
                    s.send(n);
                })
                .registerStream(FAILING, s -> {
                    s.send("one");
                    s.send("two");
                    s.send("three");
                    throw new RpcException(Status.PERMISSION_DENIED, "no fourth");
                })
                .registerStream(WAITING, s -> {
                    waitingStarted.countDown();
                    try {
                        s.receive();
                        s.receive();
                    } catch (RpcException e) {
                        stoppedWith.set(e);
                        waitingStopped.countDown();
                        throw e;
                    }
                })
                .registerStream(METADATA, s -> {
                    String v = s.requestMetadata().get("k");
                    s.send(v);
                    s.responseMetadata(Metadata.of("t", v + "-trailer"));
                })
                .start();
        client = clientBuilder(server).streamWindowBytes(SMALL_WINDOW).connect();
    }

    @AfterEach
    public void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Nothing is left on either side once every stream ended. */
    void assertNothingLeft() {
        TestSupport.await("client slots free", Duration.ofSeconds(10), () -> client.outstanding() == 0);
        TestSupport.await("server calls over", Duration.ofSeconds(10), () -> server.metrics().inFlight() == 0);
    }

    @Test
    public void bidirectionalStreamAnswersEachMessageInOrder() {
        try (ClientStream<Long, Long> s = client.openStream(SQUARES)) {
            for (long i = 0; i < 100; i++) {
                s.send(i);
                assertEquals(i * i, s.receive());
            }
            s.halfClose();
            assertNull(s.receive(), "the server ended the stream after the half-close");
            assertTrue(s.isDone());
        }
        assertNothingLeft();
    }

    @Test
    public void serverStreamingSendsManyForOne() {
        try (ClientStream<Integer, Integer> s = client.openStream(COUNT)) {
            s.send(5000);
            s.halfClose();
            for (int i = 0; i < 5000; i++) {
                assertEquals(i, s.receive());
            }
            assertNull(s.receive());
        }
        assertNothingLeft();
    }

    @Test
    public void clientStreamingSendsManyForOne() {
        try (ClientStream<Long, Long> s = client.openStream(SUM)) {
            long expected = 0;
            for (long i = 1; i <= 20_000; i++) {
                s.send(i);
                expected += i;
            }
            s.halfClose();
            assertEquals(expected, s.receive());
            assertNull(s.receive());
        }
        assertNothingLeft();
    }

    @Test
    public void anErrorArrivesAfterTheMessagesBeforeIt() {
        try (ClientStream<Void, String> s = client.openStream(FAILING)) {
            s.halfClose();
            assertEquals("one", s.receive());
            assertEquals("two", s.receive());
            assertEquals("three", s.receive());
            RpcException e = assertThrows(RpcException.class, s::receive);
            assertEquals(Status.PERMISSION_DENIED, e.status());
            assertEquals("no fourth", e.getMessage());
            assertThrows(RpcException.class, s::receive, "the end is sticky");
        }
        assertNothingLeft();
    }

    @Test
    public void metadataTravelsWithTheOpeningAndTheEnd() {
        try (ClientStream<Void, String> s = client.openStream(METADATA,
                CallOptions.DEFAULT.withMetadata(Metadata.of("k", "v1")))) {
            s.halfClose();
            assertEquals("v1", s.receive());
            assertNull(s.receive());
            assertEquals("v1-trailer", s.trailers().get("t"));
        }
    }

    /** A client's interceptors run around a stream: metadata into its opening, afterCall at its end. */
    @Test
    public void clientInterceptorsRunAroundAStream() {
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (RpcClient intercepted = clientBuilder(server).intercept(new ClientInterceptor() {
            @Override
            public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                seen.add("before " + method.name());
                return metadata.with("k", "from-interceptor");
            }

            @Override
            public void afterCall(Method<?, ?> method, Status status, Metadata responseMetadata, long nanos) {
                seen.add("after " + method.name() + " " + status + " " + responseMetadata.get("t"));
            }
        }).connect()) {
            try (ClientStream<Void, String> s = intercepted.openStream(METADATA)) {
                s.halfClose();
                assertEquals("from-interceptor", s.receive());
                assertNull(s.receive());
            }
            try (ClientStream<Void, String> s = intercepted.openStream(FAILING)) {
                s.halfClose();
                while (true) {
                    try {
                        if (s.receive() == null) {
                            break;
                        }
                    } catch (RpcException e) {
                        break;
                    }
                }
            }
        }
        // afterCall runs on the I/O thread as the stream ends, so it may come after the next beforeCall
        TestSupport.await("every afterCall", Duration.ofSeconds(5), () -> seen.size() == 4);
        assertEquals(java.util.Set.of("before streams.metadata", "after streams.metadata OK from-interceptor-trailer",
                "before streams.failing", "after streams.failing PERMISSION_DENIED null"), java.util.Set.copyOf(seen));
        assertTrue(seen.indexOf("before streams.failing") < seen.indexOf("after streams.failing PERMISSION_DENIED null"));
        assertEquals("before streams.metadata", seen.get(0));
    }

    @Test
    public void aCancelStopsTheHandler() throws Exception {
        ClientStream<String, String> s = client.openStream(WAITING);
        s.send("first");
        assertTrue(waitingStarted.await(10, TimeUnit.SECONDS));
        s.cancel();
        assertTrue(waitingStopped.await(10, TimeUnit.SECONDS), "the handler's receive ended");
        assertEquals(Status.CANCELLED, ((RpcException) stoppedWith.get()).status());
        RpcException e = assertThrows(RpcException.class, s::receive);
        assertEquals(Status.CANCELLED, e.status());
        assertTrue(s.isDone());
        TestSupport.await("server counted the cancel", Duration.ofSeconds(10), () -> server.metrics().cancelled() == 1);
        assertNothingLeft();
        assertEquals("after!", client.call(UNARY, "after"), "the connection goes on");
    }

    @Test
    public void theDeadlineEndsBothSides() throws Exception {
        Duration deadline = streamDeadline();
        long t0 = System.nanoTime(); // the deadline counts from the opening
        ClientStream<String, String> s = client.openStream(WAITING, CallOptions.DEFAULT.withTimeout(deadline));
        assertTrue(waitingStarted.await(deadline.toMillis(), TimeUnit.MILLISECONDS), "the handler started");
        RpcException e = assertThrows(RpcException.class, s::receive);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e.getMessage());
        assertTrue(ms >= deadline.toMillis() - 50 && ms < deadline.toMillis() + 10_000, "gave up after " + ms + " ms: "
                + e.getMessage());
        assertTrue(waitingStopped.await(10, TimeUnit.SECONDS), "the handler was stopped at its deadline too");
        assertEquals(Status.DEADLINE_EXCEEDED, ((RpcException) stoppedWith.get()).status());
        TestSupport.await("server counted the timeout", Duration.ofSeconds(10), () -> server.metrics().timeouts() == 1);
        assertEquals(0, server.metrics().cancelled(), "a deadline, not a cancel");
        assertNothingLeft();
    }

    /**
     * A client that stops reading a server stream holds back that stream's writer once the window
     * is used, and only it: what the server sent (all of which the client holds) stays within the
     * client's window plus one message, and calls and other streams on the same connection go on.
     */
    @Test
    public void aReaderThatStopsHoldsBackOnlyItsOwnWriter() throws Exception {
        ClientStream<Void, byte[]> flood = client.openStream(FLOOD);
        int frame = FrameDescriptor.HEADER_LENGTH + Codecs.BYTES.encodedSize(new byte[1024]);
        long bound = SMALL_WINDOW / frame + 1;
        TestSupport.await("the flood stopped by the window", Duration.ofSeconds(10), () -> produced.get() >= bound - 1);
        Thread.sleep(300);
        long held = produced.get();
        assertTrue(held <= bound, "server sent " + held + " messages of " + frame + " bytes into a window of "
                + SMALL_WINDOW + " (bound " + bound + ")");
        for (int i = 0; i < 20; i++) {
            assertEquals("x" + i + "!", client.call(UNARY, "x" + i), "calls go on beside the stalled stream");
        }
        try (ClientStream<Long, Long> other = client.openStream(SQUARES)) {
            other.send(7L);
            assertEquals(49L, other.receive(), "another stream goes on too");
            other.halfClose();
            assertNull(other.receive());
        }
        assertEquals(held, produced.get(), "the flood is still held back");
        for (int i = 0; i < 3 * bound; i++) {
            assertEquals(1024, flood.receive().length);
        }
        TestSupport.await("reading lets the writer go on", Duration.ofSeconds(10), () -> produced.get() >= 3 * bound);
        flood.cancel();
        TestSupport.await("the flood's handler stopped", Duration.ofSeconds(10), () -> stoppedWith.get() != null);
        assertEquals(Status.CANCELLED, ((RpcException) stoppedWith.get()).status());
        assertNothingLeft();
    }

    /** The same the other way: a server that does not read holds back the client's send, which times out. */
    @Test
    public void aServerThatDoesNotReadHoldsBackTheClientsSend() {
        byte[] kib = new byte[1024];
        int frame = FrameDescriptor.HEADER_LENGTH + Codecs.BYTES.encodedSize(new byte[1024]);
        long bound = SMALL_WINDOW / frame + 1;
        int sent = 0;
        try (ClientStream<byte[], Integer> s = client.openStream(SINK, CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)))) {
            ExecutorService ex = Executors.newSingleThreadExecutor();
            try {
                Future<?> f = ex.submit(() -> {
                    for (int i = 0; i < 1000; i++) {
                        s.send(kib);
                    }
                    return null;
                });
                assertThrows(java.util.concurrent.TimeoutException.class, () -> f.get(500, TimeUnit.MILLISECONDS),
                        "the send waits once the server's window is used");
                assertEquals("y!", client.call(UNARY, "y"), "calls go on beside it");
                drainNow.countDown();
                f.get(20, TimeUnit.SECONDS);
                sent = 1000;
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                ex.shutdownNow();
            }
            s.halfClose();
            assertEquals(sent, s.receive(), "every message arrived once the server read");
            assertNull(s.receive());
        }
        assertTrue(bound < 1000, "the test needs more messages than the window holds");
        assertNothingLeft();
    }

    @Test
    public void manyStreamsAtOnce() throws Exception {
        int streams = 16;
        int each = 500;
        ExecutorService ex = Executors.newFixedThreadPool(streams);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int k = 0; k < streams; k++) {
                results.add(ex.submit(() -> {
                    try (ClientStream<Long, Long> s = client.openStream(SUM)) {
                        for (long i = 1; i <= each; i++) {
                            s.send(i);
                        }
                        s.halfClose();
                        long sum = s.receive();
                        assertNull(s.receive());
                        return sum;
                    }
                }));
            }
            for (Future<Long> f : results) {
                assertEquals((long) each * (each + 1) / 2, f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            ex.shutdownNow();
        }
        assertNothingLeft();
    }

    /** Messages of 1 MiB, far over the window (each goes once the window is above 0), both ways at once. */
    @Test
    public void aStreamOfLargeMessagesWorks() throws Exception {
        int n = largeMessages();
        byte[] mib = new byte[1 << 20];
        for (int i = 0; i < mib.length; i++) {
            mib[i] = (byte) (i * 31);
        }
        try (ClientStream<byte[], byte[]> s = client.openStream(ECHO_BYTES)) {
            Thread sender = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < n; i++) {
                    s.send(mib);
                }
                s.halfClose();
            });
            for (int i = 0; i < n; i++) {
                assertArrayEquals(mib, s.receive(), "message " + i);
            }
            assertNull(s.receive());
            sender.join(10_000);
        }
        assertNothingLeft();
    }

    @Test
    public void aStreamOfManySmallMessagesWorks() throws Exception {
        int n = manySmallMessages();
        AtomicInteger got = new AtomicInteger();
        try (ClientStream<Long, Long> s = client.openStream(SQUARES)) {
            Thread sender = Thread.ofVirtual().start(() -> {
                for (long i = 0; i < n; i++) {
                    s.send(i);
                }
                s.halfClose();
            });
            for (long i = 0; i < n; i++) {
                Long r = s.receive();
                if (r != i * i) {
                    throw new AssertionError("message " + i + ": " + r);
                }
                got.incrementAndGet();
            }
            assertNull(s.receive());
            sender.join(10_000);
        }
        assertEquals(n, got.get());
        assertNothingLeft();
    }

    @Test
    public void aStreamOnAUnaryMethodAndACallOfAStreamingOneAreRefused() {
        try (ClientStream<String, String> s = client.openStream(UNARY)) {
            RpcException e = assertThrows(RpcException.class, s::receive);
            assertEquals(Status.PROTOCOL_ERROR, e.status());
            assertTrue(e.getMessage().contains("not a streaming method"), e.getMessage());
        }
        RpcException e = assertThrows(RpcException.class, () -> client.call(SQUARES, 3L));
        assertEquals(Status.PROTOCOL_ERROR, e.status());
        assertTrue(e.getMessage().contains("open a stream"), e.getMessage());
        try (ClientStream<String, String> s = client.openStream(Method.of("streams.nobody", Codecs.STRING, Codecs.STRING))) {
            assertEquals(Status.UNKNOWN_METHOD, assertThrows(RpcException.class, s::receive).status());
        }
        assertNothingLeft();
    }

    /** Null is the end, so no message is null: refused when sent, a protocol error when a codec decodes one. */
    @Test
    public void noMessageIsNull() {
        try (ClientStream<Long, Long> s = client.openStream(SQUARES)) {
            assertThrows(NullPointerException.class, () -> s.send(null));
            s.send(3L);
            assertEquals(9L, s.receive(), "the stream goes on");
        }
        dev.rdmarpc.rpc.codec.Codec<Long> nullDecoding = new dev.rdmarpc.rpc.codec.Codec<>() {
            @Override
            public int encodedSize(Long value) {
                return Codecs.LONG.encodedSize(value);
            }

            @Override
            public void encode(Long value, java.lang.foreign.MemorySegment dst, long offset) {
                Codecs.LONG.encode(value, dst, offset);
            }

            @Override
            public Long decode(java.lang.foreign.MemorySegment src, long offset, int length) {
                return null;
            }
        };
        try (ClientStream<Long, Long> s = client.openStream(Method.of(SQUARES.name(), Codecs.LONG, nullDecoding))) {
            s.send(4L);
            RpcException e = assertThrows(RpcException.class, s::receive, "a message decoded to null is not the end");
            assertEquals(Status.PROTOCOL_ERROR, e.status());
            assertTrue(e.getMessage().contains("decoded it to null"), e.getMessage());
        }
        assertNothingLeft();
    }

    @Test
    public void closingTheClientEndsItsStreams() throws Exception {
        ClientStream<String, String> s = client.openStream(WAITING);
        s.send("x");
        assertTrue(waitingStarted.await(10, TimeUnit.SECONDS));
        client.close();
        RpcException e = assertThrows(RpcException.class, s::receive);
        assertEquals(Status.CONNECTION_CLOSED, e.status());
        assertTrue(waitingStopped.await(10, TimeUnit.SECONDS), "the server stopped the handler of the closed connection");
        TestSupport.await("server calls over", Duration.ofSeconds(10), () -> server.metrics().inFlight() == 0);
        client = null;
    }
}
