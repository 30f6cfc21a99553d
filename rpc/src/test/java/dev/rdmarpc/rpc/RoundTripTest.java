package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class RoundTripTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> SLOW_UPPER = Method.of("slowUpper", Codecs.STRING, Codecs.STRING);
    static final Method<MemorySegment, MemorySegment> RAW_ECHO = Method.raw("rawEcho");
    static final Method<MemorySegment, MemorySegment> SEG_ECHO = Method.of("segEcho", Codecs.SEGMENT, Codecs.SEGMENT);
    static final Method<Integer, Long> SQUARE = Method.of("square", Codecs.INT, Codecs.LONG);
    static final Method<String, String> ATTACH = Method.of("attach", Codecs.STRING, Codecs.STRING);

    record Point(int x, long y, String label, byte[] data, Point next) {
    }

    static final Method<Point, Point> MIRROR = Method.of("mirror",
            Codecs.record(java.lang.invoke.MethodHandles.lookup(), Point.class),
            Codecs.record(java.lang.invoke.MethodHandles.lookup(), Point.class));

    static RpcServer server;
    static RpcClient client;

    @BeforeAll
    static void start() {
        server = RpcServer.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(ECHO, (ctx, req) -> req)
                .registerBlocking(SLOW_UPPER, (ctx, req) -> {
                    Thread.sleep(20);
                    return req.toUpperCase();
                })
                .registerRaw(RAW_ECHO, call -> call.respond(call.buffer(), call.payloadOffset(), call.payloadLength()))
                .register(SEG_ECHO, (ctx, req) -> req)
                .register(SQUARE, (ctx, x) -> (long) x * x)
                .register(MIRROR, (ctx, p) -> new Point(p.y() > 0 ? (int) p.y() : 0, p.x(), p.label() + "!", p.data(), p))
                .register(ATTACH, (ctx, req) -> {
                    MemorySegment a = ctx.requestAttachment().segment();
                    byte[] bytes = a.toArray(ValueLayout.JAVA_BYTE);
                    ctx.responseAttachment(Attachment.of(MemorySegment.ofArray(
                            (new String(bytes, StandardCharsets.UTF_8) + "-back").getBytes(StandardCharsets.UTF_8))));
                    return req + ":" + bytes.length;
                })
                .start();
        client = RpcClient.connect(server.address());
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    @Test
    void blockingCall() {
        assertEquals("hello", client.call(ECHO, "hello"));
        assertEquals("héllo wörld ✓ 😀", client.call(ECHO, "héllo wörld ✓ 😀"));
        assertEquals("", client.call(ECHO, ""));
        assertEquals(49L, client.call(SQUARE, 7));
    }

    @Test
    void asyncCallsOutOfOrder() throws Exception {
        List<CompletableFuture<String>> fs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            fs.add(client.callAsync(i % 2 == 0 ? SLOW_UPPER : ECHO, "m" + i));
        }
        for (int i = 0; i < 200; i++) {
            assertEquals(i % 2 == 0 ? "M" + i : "m" + i, fs.get(i).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void recordCodec() {
        Point inner = new Point(1, 2, "in", new byte[]{1, 2, 3}, null);
        Point p = new Point(5, 9, "out", null, inner);
        Point r = client.call(MIRROR, p);
        assertEquals(9, r.x());
        assertEquals(5, r.y());
        assertEquals("out!", r.label());
        assertNull(r.data());
        assertEquals("in", r.next().next().label());
        assertArrayEquals(new byte[]{1, 2, 3}, r.next().next().data());
    }

    @Test
    void segmentCallReturnsOwnedCopy() {
        MemorySegment req = MemorySegment.ofArray(new byte[]{9, 8, 7});
        MemorySegment resp = client.call(SEG_ECHO, req);
        assertArrayEquals(new byte[]{9, 8, 7}, resp.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void attachmentsTravelBothWays() {
        MemorySegment att = MemorySegment.ofArray("blob".getBytes(StandardCharsets.UTF_8));
        Reply<String> reply = client.exchange(ATTACH, "x", CallOptions.DEFAULT.withAttachment(Attachment.of(att)));
        assertEquals("x:4", reply.value());
        assertEquals("blob-back", new String(reply.attachment().segment().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
        Reply<String> none = client.exchange(ECHO, "y", CallOptions.DEFAULT);
        assertTrue(none.attachment().isEmpty());
    }

    @Test
    void zeroAllocationSendPath() throws Exception {
        int n = 1000;
        CountDownLatch done = new CountDownLatch(n);
        AtomicInteger bad = new AtomicInteger();
        AtomicReference<Throwable> err = new AtomicReference<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment payload = arena.allocate(128);
            ResponseListener l = new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView r) {
                    if (r.payloadLength() != 128 || r.buffer().get(ValueLayout.JAVA_LONG_UNALIGNED, r.payloadOffset()) != tag) {
                        bad.incrementAndGet();
                    }
                    done.countDown();
                }

                @Override
                public void onError(long tag, RpcException error) {
                    err.set(error);
                    done.countDown();
                }
            };
            for (int i = 0; i < n; i++) {
                payload.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                while (!client.send(RAW_ECHO, payload, l, i)) {
                    Thread.onSpinWait();
                }
            }
            assertTrue(done.await(10, TimeUnit.SECONDS));
        }
        assertNull(err.get());
        assertEquals(0, bad.get());
    }

    @Test
    void largeFrames() {
        byte[] big = new byte[3 * 1024 * 1024 + 17];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        Method<byte[], byte[]> bytes = Method.of("segEcho", Codecs.BYTES, Codecs.BYTES);
        assertArrayEquals(big, client.call(bytes, big, Duration.ofSeconds(10)));
    }

    @Test
    void metricsCount() {
        long before = client.metrics().calls();
        client.call(ECHO, "count me");
        assertEquals(before + 1, client.metrics().calls());
        assertTrue(server.metrics().calls() > 0);
        assertTrue(server.metrics().bytesReceived() > 0);
        assertEquals(1, server.metrics().connectionsActive());
        assertTrue(server.bufferPool().highWaterMark() >= 2);
    }
}
