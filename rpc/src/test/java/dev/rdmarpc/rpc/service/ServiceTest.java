package dev.rdmarpc.rpc.service;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Service interfaces over TCP loopback: every signature, options, errors, interop with hand-written methods. */
@Timeout(30)
class ServiceTest {
    record Point(int x, long y, String label) {
    }

    /** A type that is not a record: it gets its codec from the registry. */
    static final class Money {
        final long cents;

        Money(long cents) {
            this.cents = cents;
        }
    }

    static final Codec<Money> MONEY = new Codec<>() {
        @Override
        public int encodedSize(Money value) {
            return 8;
        }

        @Override
        public void encode(Money value, MemorySegment dst, long offset) {
            dst.set(Codecs.LONG_LE, offset, value.cents);
        }

        @Override
        public Money decode(MemorySegment src, long offset, int length) {
            Codecs.requireLength(length, 8);
            return new Money(src.get(Codecs.LONG_LE, offset));
        }
    };

    @RpcService
    interface Calc {
        String echo(String s);

        @RpcMethod(inline = true)
        long square(int x);

        String slow(String s, CallOptions options);

        CompletableFuture<String> upperAsync(String s);

        CompletableFuture<Integer> lengthAsync(String s, CallOptions options);

        CompletableFuture<Void> failAsync(String status);

        int answer();

        void record(String s);

        Point mirror(Point p);

        byte[] reverse(byte[] bytes);

        double half(double d);

        long plus(long x, CallOptions options);

        char next(char c);

        Boolean not(boolean b);

        Money add(Money m);

        String fail(String status);

        String boom(String s);

        @RpcMethod(name = "who")
        String whoAmI(CallOptions options);

        boolean onVirtualThread();

        @RpcMethod(inline = true)
        boolean inlineOnVirtualThread();

        String toString();

        default String echoTwice(String s) {
            return echo(s) + echo(s);
        }
    }

    static final class CalcImpl implements Calc {
        final AtomicReference<String> recorded = new AtomicReference<>();

        @Override
        public String echo(String s) {
            return s;
        }

        @Override
        public long square(int x) {
            return (long) x * x;
        }

        @Override
        public String slow(String s, CallOptions options) {
            assertSame(CallOptions.DEFAULT, options);
            try {
                Thread.sleep(Long.parseLong(s));
            } catch (InterruptedException e) {
                throw new RpcException(Status.CANCELLED, "interrupted");
            }
            return "slept " + s;
        }

        @Override
        public CompletableFuture<String> upperAsync(String s) {
            return CompletableFuture.supplyAsync(s::toUpperCase, CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS));
        }

        @Override
        public CompletableFuture<Integer> lengthAsync(String s, CallOptions options) {
            return CompletableFuture.completedFuture(s.length());
        }

        @Override
        public CompletableFuture<Void> failAsync(String status) {
            return CompletableFuture.failedFuture(new RpcException(Status.valueOf(status), "async " + status));
        }

        @Override
        public int answer() {
            return 42;
        }

        @Override
        public void record(String s) {
            recorded.set(s);
        }

        @Override
        public Point mirror(Point p) {
            return new Point((int) p.y(), p.x(), p.label() + "!");
        }

        @Override
        public byte[] reverse(byte[] bytes) {
            byte[] r = new byte[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                r[i] = bytes[bytes.length - 1 - i];
            }
            return r;
        }

        @Override
        public double half(double d) {
            return d / 2;
        }

        @Override
        public long plus(long x, CallOptions options) {
            return x + 1;
        }

        @Override
        public char next(char c) {
            return (char) (c + 1);
        }

        @Override
        public Boolean not(boolean b) {
            return !b;
        }

        @Override
        public Money add(Money m) {
            return new Money(m.cents + 1);
        }

        @Override
        public String fail(String status) {
            throw new RpcException(Status.valueOf(status), "failed with " + status);
        }

        @Override
        public String boom(String s) {
            throw new IllegalStateException("boom " + s);
        }

        @Override
        public String whoAmI(CallOptions options) {
            var ctx = Services.context();
            return ctx.methodName() + " " + ctx.requestMetadata().get("user");
        }

        @Override
        public boolean onVirtualThread() {
            return Thread.currentThread().isVirtual();
        }

        @Override
        public boolean inlineOnVirtualThread() {
            return Thread.currentThread().isVirtual();
        }
    }

    /** Served by hand-written handlers: the service client must reach them by the wire name rule. */
    @RpcService(name = "acme.Hand")
    interface HandClient {
        String greet(String name);

        @RpcMethod(name = "count-chars")
        int countChars(String s);
    }

    static final Method<String, String> HAND_GREET = Method.of("acme.Hand/greet", Codecs.STRING, Codecs.STRING);
    static final Method<String, Integer> HAND_COUNT = Method.of("acme.Hand/count-chars", Codecs.STRING, Codecs.INT);

    static final CodecRegistry CODECS = CodecRegistry.of(MethodHandles.lookup()).with(Money.class, MONEY);
    static final CalcImpl IMPL = new CalcImpl();
    static RpcServer server;
    static RpcClient client;
    static Calc calc;

    @BeforeAll
    static void start() {
        RpcServer.Builder builder = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(HAND_GREET, (ctx, name) -> "hello " + name)
                .register(HAND_COUNT, (ctx, s) -> s.length());
        server = Services.register(builder, ServiceDescriptor.of(Calc.class, CODECS), IMPL).start();
        client = RpcClient.connect(server.address());
        calc = Services.client(client, ServiceDescriptor.of(Calc.class, CODECS));
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    @Test
    void blockingSignaturesRoundTrip() {
        assertEquals("hello", calc.echo("hello"));
        assertEquals("héllo ✓ 😀", calc.echo("héllo ✓ 😀"));
        assertEquals(49L, calc.square(7));
        assertEquals(1_000_000_000_000L, calc.square(1_000_000));
        assertEquals(42, calc.answer());
        calc.record("noted");
        assertEquals("noted", IMPL.recorded.get());
        assertEquals(new Point(2, 1, "p!"), calc.mirror(new Point(1, 2, "p")));
        assertArrayEquals(new byte[] {3, 2, 1}, calc.reverse(new byte[] {1, 2, 3}));
        assertEquals(1.25, calc.half(2.5));
        assertEquals(Long.MAX_VALUE, calc.plus(Long.MAX_VALUE - 1, CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5))));
        assertEquals('b', calc.next('a'));
        assertEquals(Boolean.FALSE, calc.not(true));
        assertEquals(101, calc.add(new Money(100)).cents);
        assertEquals("slept 1", calc.slow("1", CallOptions.DEFAULT));
    }

    @Test
    void asyncSignaturesRoundTrip() throws Exception {
        CompletableFuture<String> upper = calc.upperAsync("abc");
        CompletableFuture<Integer> length = calc.lengthAsync("four", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)));
        assertEquals("ABC", upper.get(5, TimeUnit.SECONDS));
        assertEquals(4, length.get(5, TimeUnit.SECONDS));
    }

    @Test
    void callOptionsDeadlineIsHonoured() {
        long t0 = System.nanoTime();
        RpcException e = assertThrows(RpcException.class,
                () -> calc.slow("3000", CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100))));
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), "the client reports its own deadline: " + e.getMessage());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "failed at the deadline, not after the sleep");
    }

    @Test
    void callOptionsCarryMetadataAndTheServerSeesItsContext() {
        Metadata md = Metadata.of("user", "ada");
        assertEquals("Calc/who ada", calc.whoAmI(CallOptions.DEFAULT.withMetadata(md)));
        assertThrows(IllegalStateException.class, Services::context);
    }

    @Test
    void errorStatusReachesTheCaller() {
        RpcException e = assertThrows(RpcException.class, () -> calc.fail("PERMISSION_DENIED"));
        assertEquals(Status.PERMISSION_DENIED, e.status());
        assertTrue(e.getMessage().contains("failed with PERMISSION_DENIED"), e.getMessage());
        RpcException other = assertThrows(RpcException.class, () -> calc.boom("x"));
        assertEquals(Status.HANDLER_FAILED, other.status());
        assertTrue(other.getMessage().contains("boom x"), other.getMessage());
        ExecutionException async = assertThrows(ExecutionException.class,
                () -> calc.failAsync("UNAUTHENTICATED").get(5, TimeUnit.SECONDS));
        assertEquals(Status.UNAUTHENTICATED, ((RpcException) async.getCause()).status());
    }

    @Test
    void synchronousMethodsRunOnVirtualThreadsUnlessInline() {
        assertTrue(calc.onVirtualThread());
        assertFalse(calc.inlineOnVirtualThread());
    }

    @Test
    void localMethods() {
        assertEquals("twotwo", calc.echoTwice("two"));
        assertTrue(calc.toString().startsWith("Calc client over "), calc.toString());
        assertEquals(calc, calc);
        assertNotEquals(calc, Services.client(client, ServiceDescriptor.of(Calc.class, CODECS)));
        assertEquals(System.identityHashCode(calc), calc.hashCode());
    }

    @Test
    void wireNamesFollowTheRule() {
        ServiceDescriptor<Calc> d = ServiceDescriptor.of(Calc.class, CODECS);
        assertEquals("Calc", d.name());
        assertEquals("Calc/echo", d.method("echo").method().name());
        assertEquals("Calc/who", d.method("whoAmI").method().name());
        assertEquals(FrameDescriptor.methodId("Calc/echo"), d.method("echo").method().id());
        assertEquals(ServiceMethod.Kind.UNARY_ASYNC, d.method("upperAsync").kind());
        assertEquals(Integer.class, d.method("lengthAsync").responseType());
        assertTrue(d.method("square").inline());
        assertEquals(List.of(), d.methods().stream().filter(m -> m.javaMethod().getName().equals("echoTwice")).toList(),
                "default methods are not RPC methods");
        assertThrows(IllegalArgumentException.class, () -> d.method("echoTwice"));
        assertEquals("acme.Hand/count-chars",
                ServiceDescriptor.of(HandClient.class, MethodHandles.lookup()).method("countChars").method().name());
    }

    @Test
    void serviceClientCallsHandWrittenHandlers() {
        HandClient hand = Services.client(client, HandClient.class, MethodHandles.lookup());
        assertEquals("hello ada", hand.greet("ada"));
        assertEquals(5, hand.countChars("chars"));
    }

    @Test
    void handWrittenMethodsCallTheService() {
        assertEquals("hi", client.call(Method.of("Calc/echo", Codecs.STRING, Codecs.STRING), "hi"));
        assertEquals(81L, client.call(Method.of("Calc/square", Codecs.INT, Codecs.LONG), 9));
        assertEquals(42, client.call(Method.of("Calc/answer", Codecs.VOID, Codecs.INT), null));
        assertEquals("Calc/who bob", client.call(Method.of("Calc/who", Codecs.VOID, Codecs.STRING), null,
                CallOptions.DEFAULT.withMetadata(Metadata.of("user", "bob"))));
    }

    @Test
    void oneDescriptorServesManyClients() {
        ServiceDescriptor<Calc> d = ServiceDescriptor.of(Calc.class, CODECS);
        try (RpcClient second = RpcClient.connect(server.address())) {
            Calc a = Services.client(client, d);
            Calc b = Services.client(second, d);
            assertSame(a.getClass(), b.getClass());
            assertEquals("a", a.echo("a"));
            assertEquals("b", b.echo("b"));
        }
    }
}
