package dev.rdmarpc.rpc;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one client API: a client and a pool's channel answer every call method alike (the pool had
 * no exchange, exchangeAsync or six-argument send before), a confined payload is refused by
 * {@code sendInPlace} at once (it used to leave the listener unheard), and the builders choose one
 * transport, with system properties as defaults that a builder's settings override.
 */
@Timeout(30)
class RpcChannelTest {
    static final Method<String, String> ECHO = Method.of("channel.echo", Codecs.STRING, Codecs.STRING);
    static final Method<MemorySegment, MemorySegment> RAW = Method.raw("channel.raw");

    static RpcServer server;
    static RpcClient client;
    static RpcClientPool pool;

    @BeforeAll
    static void start() {
        server = RpcServer.builder()
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(ECHO, (ctx, req) -> {
                    ctx.responseAttachment(ctx.requestAttachment());
                    return req;
                })
                .registerRaw(RAW, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()))
                .start();
        client = RpcClient.builder().address(server.address()).connect();
        pool = RpcClientPool.builder().maxOutstanding(8).build();
    }

    @AfterAll
    static void stop() {
        pool.close();
        client.close();
        server.close();
    }

    static List<RpcChannel> channels() {
        return List.of(client, pool.channel(server.address()));
    }

    /** Completes with the response's payload and attachment bytes, or the error. */
    static final class Heard implements ResponseListener {
        final CompletableFuture<byte[][]> done = new CompletableFuture<>();

        @Override
        public void onResponse(long tag, ResponseView response) {
            done.complete(new byte[][] {response.payload().toArray(JAVA_BYTE), response.attachment().toArray(JAVA_BYTE)});
        }

        @Override
        public void onError(long tag, RpcException error) {
            done.completeExceptionally(error);
        }
    }

    @Test
    void aClientAndAPoolChannelAnswerEveryCallMethod() throws Exception {
        byte[] blob = {1, 2, 3, 4, 5};
        CallOptions withBlob = CallOptions.DEFAULT.withAttachment(Attachment.of(MemorySegment.ofArray(blob)));
        for (RpcChannel ch : channels()) {
            String who = ch.toString();
            assertEquals("a", ch.call(ECHO, "a"), who);
            assertEquals("b", ch.call(ECHO, "b", Duration.ofSeconds(5)), who);
            assertEquals("c", ch.callAsync(ECHO, "c").get(5, TimeUnit.SECONDS), who);
            Reply<String> r = ch.exchange(ECHO, "d", withBlob);
            assertEquals("d", r.value(), who);
            assertArrayEquals(blob, r.attachment().segment().toArray(JAVA_BYTE), who);
            Reply<String> ra = ch.exchangeAsync(ECHO, "e", withBlob).get(5, TimeUnit.SECONDS);
            assertArrayEquals(blob, ra.attachment().segment().toArray(JAVA_BYTE), who);

            Heard plain = new Heard();
            assertTrue(ch.send(RAW, MemorySegment.ofArray(new byte[] {9, 8}), plain, 1), who);
            assertArrayEquals(new byte[] {9, 8}, plain.done.get(5, TimeUnit.SECONDS)[0], who);
            Heard six = new Heard();
            assertTrue(ch.send(RAW, MemorySegment.ofArray(new byte[] {7}), MemorySegment.ofArray(blob),
                    TimeUnit.SECONDS.toNanos(5), six, 2), who);
            assertArrayEquals(new byte[] {7}, six.done.get(5, TimeUnit.SECONDS)[0], "the raw echo sends the payload back: " + who);
            try (Arena shared = Arena.ofShared()) {
                MemorySegment payload = shared.allocate(64 << 10).fill((byte) 3);
                Heard inPlace = new Heard();
                assertTrue(ch.sendInPlace(RAW, payload, inPlace, 3), who);
                assertArrayEquals(payload.toArray(JAVA_BYTE), inPlace.done.get(5, TimeUnit.SECONDS)[0], who);
            }
        }
    }

    @Test
    void sendInPlaceRefusesConfinedMemoryAtOnceAndSendsNothing() throws Exception {
        for (RpcChannel ch : channels()) {
            long callsBefore = server.metrics().calls();
            Heard heard = new Heard();
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment payload = confined.allocate(64 << 10).fill((byte) 1);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> ch.sendInPlace(RAW, payload, heard, 1), ch.toString());
                assertTrue(e.getMessage().contains("confined") && e.getMessage().contains("use send"), e.getMessage());
                // The same memory goes by send, which copies it on this thread.
                Heard copied = new Heard();
                assertTrue(ch.send(RAW, payload, copied, 2));
                assertEquals(64 << 10, copied.done.get(5, TimeUnit.SECONDS)[0].length);
            }
            assertFalse(heard.done.isDone(), "the refused call's listener hears nothing");
            assertEquals(callsBefore + 1, server.metrics().calls(), "only the copied call reached the server");
        }
        assertEquals(0, client.outstanding());
    }

    @Test
    void aPoolChannelIsOnePerEndpointAndClosesWithThePool() {
        RpcClientPool p = RpcClientPool.builder().build();
        RpcChannel ch = p.channel(server.address());
        assertSame(ch, p.channel(server.address()));
        assertEquals("x", ch.call(ECHO, "x"));
        p.close();
        assertEquals(Status.CONNECTION_CLOSED, assertThrows(RpcException.class, () -> ch.call(ECHO, "y")).status());
        assertEquals(Status.CONNECTION_CLOSED, assertThrows(RpcException.class, () -> p.channel(server.address())).status());
    }

    @Test
    void aBuilderUsesOneTransport() {
        try (TcpTransport shared = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)))) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> RpcClient.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(2))).transport(shared));
            assertTrue(e.getMessage().contains("transport() cannot be combined with tcp()"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> RpcServer.builder().transport(shared).rdma());
            assertThrows(IllegalStateException.class, () -> RpcClientPool.builder().rdma().tcp(cfg -> { }));
            // A shared transport stays open after the client that used it.
            try (RpcClient c = RpcClient.builder().address(server.address()).transport(shared).connect()) {
                assertEquals("s", c.call(ECHO, "s"));
            }
            try (RpcClient c = RpcClient.builder().address(server.address()).transport(shared).connect()) {
                assertEquals("t", c.call(ECHO, "t"));
            }
        }
    }

    @Test
    void sharedSettingsAreValidatedAlikeByEveryBuilder() {
        List<Function<Integer, Runnable>> builders = List.of(
                n -> () -> RpcServer.builder().maxFrameLength(n).start().close(),
                n -> () -> RpcClient.builder().address(server.address()).maxFrameLength(n).connect().close(),
                n -> () -> RpcClientPool.builder().maxFrameLength(n).build().close());
        for (Function<Integer, Runnable> b : builders) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.apply(8).run());
            assertTrue(e.getMessage().startsWith("maxFrameLength must be in [32, "), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpcClientPool.builder().maxOutstanding(0).build());
        assertTrue(e.getMessage().startsWith("maxOutstanding must be in [1, 65536]"), e.getMessage());
    }

    /** @return how many live threads have a name starting with {@code prefix} */
    static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    void propertiesAreDefaultsThatBuilderSettingsOverride() {
        // Without properties: the builder's role names its threads, one I/O thread for a client.
        long before = threads("rdmarpc-client-");
        try (RpcClient c = RpcClient.builder().address(server.address()).connect()) {
            assertEquals(before + 1, threads("rdmarpc-client-"));
            assertEquals("n", c.call(ECHO, "n"));
        }
        System.setProperty("rdmarpc.tcp.threadNamePrefix", "from-property");
        System.setProperty("rdmarpc.tcp.ioThreads", "2");
        try {
            try (RpcClient c = RpcClient.builder().address(server.address()).connect()) {
                assertEquals(2, threads("from-property-"), "the properties beat the builder's defaults for its role");
                assertEquals("p", c.call(ECHO, "p"));
            }
            try (RpcClient c = RpcClient.builder().address(server.address())
                    .tcp(cfg -> cfg.threadNamePrefix("from-setter").loop(l -> l.ioThreads(3))).connect()) {
                assertEquals(3, threads("from-setter-"), "a setting in tcp(...) beats the properties");
                assertEquals(0, threads("from-property-"));
                assertEquals("q", c.call(ECHO, "q"));
            }
        } finally {
            System.clearProperty("rdmarpc.tcp.threadNamePrefix");
            System.clearProperty("rdmarpc.tcp.ioThreads");
        }
    }
}
