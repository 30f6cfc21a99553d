package dev.rdmarpc.rpc.service;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Streaming methods of service interfaces over TCP loopback: the three shapes through the generated
 * client, options through {@code open(options)}, the server's context and errors, interop with
 * hand-written {@code openStream} / {@code registerStream} both ways, and what registration refuses.
 */
@Timeout(30)
class ServiceStreamTest {
    record Line(String who, String text) {
    }

    @RpcService(name = "acme.Chat")
    interface Chat {
        /** A unary method beside the streams. */
        String hello(String name);

        /** Bidirectional: each line answered with its echo. */
        Streaming<Line, Line> chat();

        /** Server streaming: one count from the client, that many numbers back. */
        Streaming<Integer, Integer> count();

        /** Client streaming: the sum of what the client sent, once it half-closed. */
        Streaming<Long, Long> sum();

        /** Server streaming without client messages: what the handler sees of its call, and trailers. */
        @RpcMethod(name = "who")
        Streaming<Void, String> whoAmI();

        /** Two messages, then PERMISSION_DENIED. */
        Streaming<Void, String> failing();

        /** Waits in receive until stopped. */
        Streaming<String, String> waiting();
    }

    static final class ChatImpl implements Chat {
        final CountDownLatch waitingStarted = new CountDownLatch(1);
        final CountDownLatch waitingStopped = new CountDownLatch(1);
        final AtomicReference<Throwable> stoppedWith = new AtomicReference<>();

        @Override
        public String hello(String name) {
            return "hello " + name;
        }

        @Override
        public Streaming<Line, Line> chat() {
            return Streaming.serve(stream -> {
                for (Line l; (l = stream.receive()) != null; ) {
                    stream.send(new Line("echo", l.who() + ": " + l.text()));
                }
            });
        }

        @Override
        public Streaming<Integer, Integer> count() {
            return Streaming.serve(stream -> {
                int n = stream.receive();
                for (int i = 0; i < n; i++) {
                    stream.send(i);
                }
            });
        }

        @Override
        public Streaming<Long, Long> sum() {
            return Streaming.serve(stream -> {
                long sum = 0;
                for (Long x; (x = stream.receive()) != null; ) {
                    sum += x;
                }
                stream.send(sum);
            });
        }

        @Override
        public Streaming<Void, String> whoAmI() {
            return Streaming.serve(stream -> {
                stream.send(stream.methodName() + " " + stream.requestMetadata().get("user"));
                stream.send(Services.context() == stream ? "context is the stream" : "context is " + Services.context());
                stream.send(Thread.currentThread().isVirtual() ? "virtual" : "platform");
                stream.responseMetadata(Metadata.of("bye", stream.requestMetadata().get("user")));
            });
        }

        @Override
        public Streaming<Void, String> failing() {
            return Streaming.serve(stream -> {
                stream.send("one");
                stream.send("two");
                throw new RpcException(Status.PERMISSION_DENIED, "no third");
            });
        }

        @Override
        public Streaming<String, String> waiting() {
            return Streaming.serve(stream -> {
                waitingStarted.countDown();
                try {
                    stream.receive();
                    stream.receive();
                } catch (RpcException e) {
                    stoppedWith.set(e);
                    waitingStopped.countDown();
                    throw e;
                }
            });
        }
    }

    /** Served by a hand-registered stream handler: the service client must reach it by its wire name. */
    @RpcService(name = "acme.Hand")
    interface HandStreams {
        Streaming<String, String> upper();
    }

    static final Method<String, String> HAND_UPPER = Method.of("acme.Hand/upper", Codecs.STRING, Codecs.STRING);
    static final Codec<Line> LINE = Codecs.record(MethodHandles.lookup(), Line.class);

    static final ChatImpl IMPL = new ChatImpl();
    static RpcServer server;
    static RpcClient client;
    static Chat chat;

    @BeforeAll
    static void start() {
        RpcServer.Builder builder = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .registerStream(HAND_UPPER, stream -> {
                    for (String s; (s = stream.receive()) != null; ) {
                        stream.send(s.toUpperCase());
                    }
                });
        server = Services.register(builder, Chat.class, IMPL, MethodHandles.lookup()).start();
        client = RpcClient.connect(server.address());
        chat = Services.client(client, Chat.class, MethodHandles.lookup());
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < end, "timed out waiting: " + what);
            Thread.sleep(5);
        }
    }

    static void assertNothingLeft() throws InterruptedException {
        await("client slots free", () -> client.outstanding() == 0);
        await("server calls over", () -> server.metrics().inFlight() == 0);
    }

    @Test
    void bidirectional() throws Exception {
        try (ClientStream<Line, Line> s = chat.chat().open()) {
            for (int i = 0; i < 100; i++) {
                s.send(new Line("ada", "line " + i));
                assertEquals(new Line("echo", "ada: line " + i), s.receive());
            }
            s.halfClose();
            assertNull(s.receive(), "the handler returned after the half-close: OK");
            assertTrue(s.isDone());
        }
        assertEquals("hello bob", chat.hello("bob"), "unary methods beside streams");
        assertNothingLeft();
    }

    @Test
    void serverStreaming() throws Exception {
        try (ClientStream<Integer, Integer> s = chat.count().open()) {
            s.send(1000);
            s.halfClose();
            for (int i = 0; i < 1000; i++) {
                assertEquals(i, s.receive());
            }
            assertNull(s.receive());
        }
        assertNothingLeft();
    }

    @Test
    void clientStreaming() throws Exception {
        try (ClientStream<Long, Long> s = chat.sum().open()) {
            for (long i = 1; i <= 1000; i++) {
                s.send(i);
            }
            s.halfClose();
            assertEquals(500_500L, s.receive());
            assertNull(s.receive());
        }
        assertNothingLeft();
    }

    @Test
    void metadataThroughOpenOptionsAndTheHandlersContext() throws Exception {
        try (ClientStream<Void, String> s = chat.whoAmI().open(CallOptions.DEFAULT.withMetadata(Metadata.of("user", "ada")))) {
            s.halfClose();
            assertEquals("acme.Chat/who ada", s.receive());
            assertEquals("context is the stream", s.receive(), "Services.context() in a stream handler");
            assertEquals("virtual", s.receive());
            assertNull(s.receive());
            assertEquals("ada", s.trailers().get("bye"));
        }
        assertThrows(IllegalStateException.class, Services::context, "set on the handler's thread only");
        assertNothingLeft();
    }

    @Test
    void deadlineThroughOpenOptionsEndsBothSides() throws Exception {
        Duration deadline = Duration.ofMillis(500);
        long t0 = System.nanoTime();
        ClientStream<String, String> s = chat.waiting().open(CallOptions.DEFAULT.withTimeout(deadline));
        assertTrue(IMPL.waitingStarted.await(deadline.toMillis(), TimeUnit.MILLISECONDS), "the handler started");
        RpcException e = assertThrows(RpcException.class, s::receive);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e.getMessage());
        assertTrue(ms >= deadline.toMillis() - 50, "gave up after " + ms + " ms, before the deadline");
        assertTrue(IMPL.waitingStopped.await(10, TimeUnit.SECONDS), "the handler was stopped at its deadline too");
        assertEquals(Status.DEADLINE_EXCEEDED, ((RpcException) IMPL.stoppedWith.get()).status());
        s.close();
        assertNothingLeft();
    }

    @Test
    void anErrorAfterMessagesReachesTheClientAfterThem() throws Exception {
        try (ClientStream<Void, String> s = chat.failing().open()) {
            assertEquals("one", s.receive());
            assertEquals("two", s.receive());
            RpcException e = assertThrows(RpcException.class, s::receive);
            assertEquals(Status.PERMISSION_DENIED, e.status());
            assertTrue(e.getMessage().contains("no third"), e.getMessage());
        }
        assertNothingLeft();
    }

    @Test
    void theClientsStreamingIsBuiltOnceAndNamesItsMethod() {
        assertSame(chat.chat(), chat.chat(), "chat() allocates nothing: one bound Streaming per client");
        assertNotSame(chat.chat(), chat.count());
        assertTrue(chat.chat().toString().startsWith("acme.Chat/chat over "), chat.chat().toString());
        Chat other = Services.client(client, Chat.class, MethodHandles.lookup());
        assertNotSame(chat.chat(), other.chat(), "bound per client");
        assertThrows(NullPointerException.class, () -> chat.chat().open(null));
    }

    @Test
    void theServersStreamingOpensNothing() {
        Streaming<Line, Line> served = IMPL.chat();
        IllegalStateException e = assertThrows(IllegalStateException.class, served::open);
        assertTrue(e.getMessage().contains("server's side"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> served.open(CallOptions.DEFAULT));
        assertTrue(served.toString().startsWith("Streaming.serve("), served.toString());
        assertThrows(NullPointerException.class, () -> Streaming.serve(null));
    }

    @Test
    void theDescriptorSaysStream() {
        ServiceDescriptor<Chat> d = ServiceDescriptor.of(Chat.class, MethodHandles.lookup());
        ServiceMethod m = d.method("chat");
        assertEquals(ServiceMethod.Kind.STREAM, m.kind());
        assertEquals(Line.class, m.requestType());
        assertEquals(Line.class, m.responseType());
        assertEquals("acme.Chat/chat", m.method().name());
        assertEquals(Void.class, d.method("whoAmI").requestType());
        assertSame(Codecs.VOID, d.method("whoAmI").method().requestCodec());
        assertEquals(ServiceMethod.Kind.UNARY, d.method("hello").kind());
    }

    @Test
    void aHandWrittenStreamOpensTheServicesMethod() throws Exception {
        Method<Line, Line> hand = Method.of("acme.Chat/chat", LINE, LINE);
        try (ClientStream<Line, Line> s = client.openStream(hand, CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10)))) {
            s.send(new Line("bob", "hi"));
            assertEquals(new Line("echo", "bob: hi"), s.receive());
            s.halfClose();
            assertNull(s.receive());
        }
        assertNothingLeft();
    }

    @Test
    void theServiceClientOpensAHandRegisteredStream() throws Exception {
        HandStreams hand = Services.client(client, HandStreams.class, MethodHandles.lookup());
        List<String> got = new ArrayList<>();
        try (ClientStream<String, String> s = hand.upper().open()) {
            s.send("a");
            s.send("bc");
            s.halfClose();
            for (String x; (x = s.receive()) != null; ) {
                got.add(x);
            }
        }
        assertEquals(List.of("A", "BC"), got);
        assertNothingLeft();
    }

    @Test
    void aStreamingMethodCalledAsUnaryOrTheOtherWayFailsAtCallTime() {
        RpcException e = assertThrows(RpcException.class,
                () -> client.call(Method.of("acme.Chat/count", Codecs.INT, Codecs.INT), 3));
        assertEquals(Status.PROTOCOL_ERROR, e.status(), e.getMessage());
        try (ClientStream<String, String> s = client.openStream(Method.of("acme.Chat/hello", Codecs.STRING, Codecs.STRING))) {
            RpcException other = assertThrows(RpcException.class, s::receive);
            assertEquals(Status.PROTOCOL_ERROR, other.status(), other.getMessage());
        }
    }
}
