package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Metadata and interceptors end to end (issue 19, points 3 and 4), the same over every transport:
 * request and response metadata, string and binary, on every kind of handler; the raw path's view;
 * the size limits on each side and what each refusal says; error responses that carry metadata;
 * client and server interceptors in their documented order, with a logging, an auth-token and a
 * metrics interceptor.
 *
 * <p>The server takes up to 12 KiB of metadata, the client 8 KiB (the default), and a second
 * client 64 KiB, so that each side's limit can be crossed on its own. Public test methods: the RDMA
 * subclass lives in another package.
 */
public abstract class MetadataContract {
    /** Echoes the request; answers with the request's metadata plus {@code handler=inline}. */
    static final Method<String, String> INLINE = Method.of("md.inline", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> BLOCKING = Method.of("md.blocking", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> ASYNC = Method.of("md.async", Codecs.STRING, Codecs.STRING);
    /** A raw handler that reads the metadata in place: answers the value of "tenant" and whether "token-bin" is 1,2,3. */
    static final Method<byte[], String> RAW = Method.of("md.raw", Codecs.BYTES, Codecs.STRING);
    /** A raw handler that defers, the response metadata set before it does. */
    static final Method<byte[], byte[]> DEFERRED = Method.of("md.deferred", Codecs.BYTES, Codecs.BYTES);
    /** Answers with response metadata of the request's length in bytes (one value of that size). */
    static final Method<Integer, String> BIG_RESPONSE = Method.of("md.bigResponse", Codecs.INT, Codecs.STRING);
    /** Fails with RESOURCE_EXHAUSTED and "retry-after-ms" metadata. */
    static final Method<String, String> FAILS = Method.of("md.fails", Codecs.STRING, Codecs.STRING);
    /** Guarded by the auth interceptor: only callers with "authorization: Bearer good" get in. */
    static final Method<String, String> SECURE = Method.of("secure.echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> SECURE_BLOCKING = Method.of("secure.blocking", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> SECURE_ASYNC = Method.of("secure.async", Codecs.STRING, Codecs.STRING);
    static final Method<byte[], byte[]> SECURE_RAW = Method.of("secure.raw", Codecs.BYTES, Codecs.BYTES);
    /** Blocks until cancelled. */
    static final Method<String, String> WAIT = Method.of("md.wait", Codecs.STRING, Codecs.STRING);

    static final int SERVER_LIMIT = 12 << 10;

    /** What the logging interceptors saw, in order. */
    final Queue<String> log = new ConcurrentLinkedQueue<>();
    /** Server calls by "method status", from the metrics interceptor. */
    final Map<String, LongAdder> serverCounts = new ConcurrentHashMap<>();
    /** Client calls by "method status", and their total time, from the client metrics interceptor. */
    final Map<String, LongAdder> clientCounts = new ConcurrentHashMap<>();
    final AtomicInteger securedHandlerRuns = new AtomicInteger();
    final CountDownLatch waiting = new CountDownLatch(1);
    private final ExecutorService answerer = Executors.newSingleThreadExecutor();
    RpcServer server;
    RpcClient client;

    /** @return a server builder of this transport, not started */
    protected abstract RpcServer.Builder serverBuilder();

    /** @return a client builder of this transport for {@code server}, not connected */
    protected abstract RpcClient.Builder clientBuilder(RpcServer server);

    private static Metadata echoed(CallContext ctx, String handler) {
        return ctx.requestMetadata().with("handler", handler);
    }

    @BeforeEach
    public void start() {
        server = serverBuilder()
                .maxMetadataBytes(SERVER_LIMIT)
                .intercept(logging("s1"))
                .intercept(logging("s2"))
                .intercept(new AuthInterceptor())
                .intercept(new ServerInterceptor() {
                    @Override
                    public void beforeCall(CallContext call) {
                    }

                    @Override
                    public void afterCall(CallContext call, Status status) {
                        serverCounts.computeIfAbsent(call.methodName() + " " + status, k -> new LongAdder()).increment();
                    }
                })
                .register(INLINE, (ctx, s) -> {
                    ctx.responseMetadata(echoed(ctx, "inline"));
                    return s;
                })
                .registerBlocking(BLOCKING, (ctx, s) -> {
                    ctx.responseMetadata(echoed(ctx, "blocking"));
                    return s;
                })
                .registerAsync(ASYNC, (ctx, s) -> {
                    ctx.responseMetadata(echoed(ctx, "async"));
                    return CompletableFuture.supplyAsync(() -> s, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS));
                })
                .registerRaw(RAW, call -> {
                    MetadataView md = call.requestMetadataView();
                    String tenant = md.get("tenant");
                    boolean token = md.valueEquals("token-bin", new byte[] {1, 2, 3});
                    long at = md.valueOffset("token-bin");
                    int first = at < 0 ? -1 : call.buffer().get(ValueLayout.JAVA_BYTE, at);
                    call.responseMetadata(Metadata.of("handler", "raw"));
                    call.respond(Codecs.STRING, tenant + " " + token + " " + first + " " + md.size() + " " + call.payloadLength());
                })
                .registerRaw(DEFERRED, call -> {
                    byte[] request = call.payload().toArray(ValueLayout.JAVA_BYTE);
                    call.responseMetadata(Metadata.of("handler", "deferred").with("tenant", String.valueOf(call.requestMetadataView().get("tenant"))));
                    DeferredCall d = call.defer();
                    answerer.execute(() -> d.respond(MemorySegment.ofArray(request), 0, request.length));
                })
                .register(BIG_RESPONSE, (ctx, n) -> {
                    ctx.responseMetadata(Metadata.of("big-bin", new byte[n]));
                    return "sent " + n;
                })
                .register(FAILS, (ctx, s) -> {
                    ctx.responseMetadata(Metadata.of("handler", "fails"));
                    throw new RpcException(Status.RESOURCE_EXHAUSTED, "come back later").withMetadata(Metadata.of("retry-after-ms", "250"));
                })
                .register(SECURE, (ctx, s) -> {
                    securedHandlerRuns.incrementAndGet();
                    return s + " for " + ctx.responseMetadata().get("authenticated-as");
                })
                .registerBlocking(SECURE_BLOCKING, (ctx, s) -> {
                    securedHandlerRuns.incrementAndGet();
                    return s;
                })
                .registerAsync(SECURE_ASYNC, (ctx, s) -> {
                    securedHandlerRuns.incrementAndGet();
                    return CompletableFuture.completedFuture(s);
                })
                .registerRaw(SECURE_RAW, call -> {
                    securedHandlerRuns.incrementAndGet();
                    call.respond(call.buffer(), call.payloadOffset(), call.payloadLength());
                })
                .registerBlocking(WAIT, (ctx, s) -> {
                    waiting.countDown();
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        return "interrupted";
                    }
                    return "slept";
                })
                .start();
        client = clientBuilder(server).connect();
    }

    @AfterEach
    public void stop() {
        answerer.shutdownNow();
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private ServerInterceptor logging(String name) {
        return new ServerInterceptor() {
            @Override
            public void beforeCall(CallContext call) {
                log.add(name + ".before " + call.methodName());
            }

            @Override
            public void afterCall(CallContext call, Status status) {
                log.add(name + ".after " + call.methodName() + " " + status);
            }
        };
    }

    /**
     * Lets calls to "secure.*" methods in only with "authorization: Bearer good", telling the
     * handler (and the client) who the caller is in the response metadata; refuses the others with
     * UNAUTHENTICATED and a "www-authenticate" hint. Reads the raw path's metadata in place.
     */
    static final class AuthInterceptor implements ServerInterceptor {
        private static final byte[] GOOD = "Bearer good".getBytes(StandardCharsets.UTF_8);

        @Override
        public void beforeCall(CallContext call) {
            if (!call.methodName().startsWith("secure.")) {
                return;
            }
            boolean good = call instanceof RawCall raw ? raw.requestMetadataView().valueEquals("authorization", GOOD)
                    : "Bearer good".equals(call.requestMetadata().get("authorization"));
            if (!good) {
                throw new RpcException(Status.UNAUTHENTICATED, "no valid token for " + call.methodName())
                        .withMetadata(Metadata.of("www-authenticate", "Bearer"));
            }
            call.responseMetadata(call.responseMetadata().with("authenticated-as", "alice"));
        }
    }

    private static ClientInterceptor token(String value) {
        return (method, metadata) -> metadata.with("authorization", value);
    }

    private ClientInterceptor clientLogging(String name) {
        return new ClientInterceptor() {
            @Override
            public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                log.add(name + ".before " + method.name() + " " + metadata.keys());
                return metadata.with(name, "seen");
            }

            @Override
            public void afterCall(Method<?, ?> method, Status status, Metadata responseMetadata, long nanos) {
                log.add(name + ".after " + method.name() + " " + status + " " + responseMetadata.get("handler"));
            }
        };
    }

    // ------------------------------------------------------------------ metadata

    @Test
    public void metadataTravelsBothWaysOnEveryKindOfHandler() throws Exception {
        byte[] binary = {0, (byte) 0xFF, 10, 13, (byte) 0x80};
        Metadata md = Metadata.of("trace-id", "4bf92f3577b34da6").with("tenant", "zürich ☃").with("token-bin", binary);
        CallOptions opts = CallOptions.DEFAULT.withMetadata(md);
        for (Method<String, String> m : List.of(INLINE, BLOCKING, ASYNC)) {
            Reply<String> reply = client.exchange(m, "hello", opts);
            assertEquals("hello", reply.value(), m.name());
            Metadata back = reply.metadata();
            String kind = m.name().substring(3);
            assertEquals(kind, back.get("handler"));
            assertEquals("4bf92f3577b34da6", back.get("trace-id"), m.name());
            assertEquals("zürich ☃", back.get("tenant"), m.name());
            assertArrayEquals(binary, back.getBytes("token-bin"), m.name());
            Reply<String> async = client.exchangeAsync(m, "again", opts).get(10, TimeUnit.SECONDS);
            assertEquals(md.with("handler", kind), async.metadata(), m.name() + " async");
        }
        // the raw handler reads in place: the payload excludes the metadata block
        byte[] payload = {9, 8, 7};
        Reply<String> raw = client.exchange(RAW, payload,
                CallOptions.DEFAULT.withMetadata(Metadata.of("tenant", "acme").with("token-bin", new byte[] {1, 2, 3})));
        assertEquals("acme true 1 2 3", raw.value());
        assertEquals("raw", raw.metadata().get("handler"));
        assertEquals("null false -1 0 3", client.call(RAW, payload), "no metadata: an empty view");
        Reply<byte[]> deferred = client.exchange(DEFERRED, payload, CallOptions.DEFAULT.withMetadata(Metadata.of("tenant", "t1")));
        assertArrayEquals(payload, deferred.value());
        assertEquals(Metadata.of("handler", "deferred").with("tenant", "t1"), deferred.metadata());
    }

    @Test
    public void aCallWithoutMetadataCarriesNoBlock() {
        assertEquals("x", client.call(INLINE, "x"));
        long before = client.metrics().bytesSent();
        Reply<String> reply = client.exchange(INLINE, "abc", CallOptions.DEFAULT);
        assertEquals(32 + 3, client.metrics().bytesSent() - before, "header and payload only");
        assertEquals(Metadata.of("handler", "inline"), reply.metadata());
        long withMd = client.metrics().bytesSent();
        client.call(INLINE, "abc", CallOptions.DEFAULT.withMetadata(Metadata.of("k", "v")));
        assertEquals(32 + 3 + Metadata.of("k", "v").encodedLength(), client.metrics().bytesSent() - withMd);
        assertEquals(4 + 3 + 1 + 1, Metadata.of("k", "v").encodedLength());
    }

    @Test
    public void errorResponsesCarryMetadata() {
        RpcException e = assertThrows(RpcException.class, () -> client.call(FAILS, "x"));
        assertEquals(Status.RESOURCE_EXHAUSTED, e.status());
        assertEquals("come back later", e.getMessage());
        assertEquals("250", e.metadata().get("retry-after-ms"));
        assertEquals("fails", e.metadata().get("handler"), "what the handler set before it threw, too");
    }

    @Test
    public void metadataOverTheClientsLimitIsNotSent() {
        Metadata big = Metadata.of("big-bin", new byte[9000]);
        long sent = client.metrics().bytesSent();
        RpcException e = assertThrows(RpcException.class,
                () -> client.call(INLINE, "x", CallOptions.DEFAULT.withMetadata(big)));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("request metadata of 9014 bytes is over the client's maxMetadataBytes (8192)"),
                e.getMessage());
        assertEquals(sent, client.metrics().bytesSent(), "nothing sent");
        assertEquals("ok", client.call(INLINE, "ok"));
    }

    @Test
    public void metadataOverTheServersLimitIsRefusedWithoutRunningTheCall() {
        try (RpcClient big = clientBuilder(server).maxMetadataBytes(64 << 10).connect()) {
            Metadata md = Metadata.of("big-bin", new byte[13_000]);
            for (Method<String, String> m : List.of(INLINE, BLOCKING, SECURE)) {
                RpcException e = assertThrows(RpcException.class, () -> big.call(m, "x", CallOptions.DEFAULT.withMetadata(md)));
                assertEquals(Status.PAYLOAD_TOO_LARGE, e.status(), m.name());
                assertTrue(e.getMessage().contains("request metadata of 13014 bytes is over the server's maxMetadataBytes (12288)"),
                        e.getMessage());
            }
            assertEquals(0, securedHandlerRuns.get());
            assertEquals("fits", big.call(INLINE, "fits", CallOptions.DEFAULT.withMetadata(Metadata.of("big-bin", new byte[12_000]))));
        }
    }

    @Test
    public void responseMetadataOverALimitFailsTheCallWithAReason() {
        // within the server's 12 KiB, over the client's 8 KiB: the client refuses it
        RpcException e = assertThrows(RpcException.class, () -> client.call(BIG_RESPONSE, 10_000));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("response metadata of 10014 bytes is over the client's maxMetadataBytes (8192)"),
                e.getMessage());
        // over the server's own: it answers with the error instead
        e = assertThrows(RpcException.class, () -> client.call(BIG_RESPONSE, 13_000));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("response metadata of 13014 bytes is over the server's maxMetadataBytes (12288)"),
                e.getMessage());
        assertEquals("sent 100", client.call(BIG_RESPONSE, 100), "the connection goes on");
    }

    @Test
    public void theRawClientSendsMetadataAndReadsTheResponsesInPlace() throws Exception {
        CompletableFuture<String> seen = new CompletableFuture<>();
        MemorySegment payload = MemorySegment.ofArray("raw".getBytes(StandardCharsets.UTF_8));
        ResponseListener listener = new ResponseListener() {
            @Override
            public void onResponse(long tag, ResponseView response) {
                seen.complete(response.decode(Codecs.STRING) + " " + response.metadata().get("handler") + " "
                        + response.metadata().get("trace-id") + " " + response.metadata().size());
            }

            @Override
            public void onError(long tag, RpcException error) {
                seen.completeExceptionally(error);
            }
        };
        assertTrue(client.send(INLINE, payload, Metadata.of("trace-id", "r1"), MemorySegment.NULL, 0, listener, 7));
        assertEquals("raw inline r1 2", seen.get(10, TimeUnit.SECONDS), "metadata both ways on the raw path");
        RpcException e = assertThrows(RpcException.class, () -> client.send(INLINE, payload,
                Metadata.of("big-bin", new byte[9000]), MemorySegment.NULL, 0, listener, 8));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        assertEquals(0, client.metrics().inFlight(), "nothing held for the refused call");
    }

    // ------------------------------------------------------------------ interceptors

    @Test
    public void interceptorsRunInTheirDocumentedOrder() {
        try (RpcClient c = clientBuilder(server).intercept(clientLogging("c1")).intercept(clientLogging("c2")).connect()) {
            assertEquals("x", c.call(INLINE, "x", CallOptions.DEFAULT.withMetadata(Metadata.of("trace-id", "t"))));
            TestSupport.await("the server's afterCall", Duration.ofSeconds(5), () -> log.size() == 8);
            assertEquals(List.of(
                    "c1.before md.inline [trace-id]",
                    "c2.before md.inline [trace-id, c1]",
                    "s1.before md.inline", "s2.before md.inline",
                    "s2.after md.inline OK", "s1.after md.inline OK",
                    "c2.after md.inline OK inline", "c1.after md.inline OK inline"), sorted(List.copyOf(log)));
            log.clear();
            RpcException e = assertThrows(RpcException.class, () -> c.call(FAILS, "x"));
            assertEquals(Status.RESOURCE_EXHAUSTED, e.status());
            TestSupport.await("the server's afterCall", Duration.ofSeconds(5), () -> log.size() == 8);
            assertTrue(log.contains("s1.after md.fails RESOURCE_EXHAUSTED"), log.toString());
            assertTrue(log.contains("c1.after md.fails RESOURCE_EXHAUSTED fails"), log.toString());
        }
    }

    /**
     * The client's and the server's log lines interleave by thread timing only where the order does
     * not matter (the server's afterCall and the client's completion race): put each side's own
     * lines in order, client before first.
     */
    private static List<String> sorted(List<String> lines) {
        List<String> out = new ArrayList<>();
        lines.stream().filter(l -> l.contains(".before") && l.startsWith("c")).forEach(out::add);
        lines.stream().filter(l -> l.startsWith("s")).forEach(out::add);
        lines.stream().filter(l -> l.contains(".after") && l.startsWith("c")).forEach(out::add);
        return out;
    }

    @Test
    public void anAuthInterceptorRefusesCallsWithoutAGoodToken() {
        List<Method<String, String>> typed = List.of(SECURE, SECURE_BLOCKING, SECURE_ASYNC);
        for (Method<String, String> m : typed) {
            RpcException e = assertThrows(RpcException.class, () -> client.call(m, "x"));
            assertEquals(Status.UNAUTHENTICATED, e.status(), m.name());
            assertEquals("no valid token for " + m.name(), e.getMessage());
            assertEquals("Bearer", e.metadata().get("www-authenticate"));
        }
        RpcException raw = assertThrows(RpcException.class, () -> client.call(SECURE_RAW, new byte[] {1}));
        assertEquals(Status.UNAUTHENTICATED, raw.status());
        try (RpcClient bad = clientBuilder(server).intercept(token("Bearer bad")).connect()) {
            assertEquals(Status.UNAUTHENTICATED, assertThrows(RpcException.class, () -> bad.call(SECURE, "x")).status());
        }
        assertEquals(0, securedHandlerRuns.get(), "no refused call reached its handler");
        try (RpcClient good = clientBuilder(server).intercept(token("Bearer good")).connect()) {
            Reply<String> r = good.exchange(SECURE, "x", CallOptions.DEFAULT);
            assertEquals("x for alice", r.value(), "the handler sees what the interceptor added");
            assertEquals("alice", r.metadata().get("authenticated-as"));
            assertEquals("y", good.call(SECURE_BLOCKING, "y"));
            assertEquals("z", good.call(SECURE_ASYNC, "z"));
            assertArrayEquals(new byte[] {4, 5}, good.call(SECURE_RAW, new byte[] {4, 5}));
        }
        assertEquals(4, securedHandlerRuns.get());
        assertEquals(5, count(serverCounts, "UNAUTHENTICATED", "secure."), "the metrics interceptor saw each refusal");
    }

    private static long count(Map<String, LongAdder> counts, String status, String prefix) {
        return counts.entrySet().stream().filter(e -> e.getKey().startsWith(prefix) && e.getKey().endsWith(" " + status))
                .mapToLong(e -> e.getValue().sum()).sum();
    }

    @Test
    public void aMetricsInterceptorCountsEveryOutcomeOnBothSides() throws Exception {
        LongAdder totalNanos = new LongAdder();
        ClientInterceptor metrics = new ClientInterceptor() {
            @Override
            public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                return metadata;
            }

            @Override
            public void afterCall(Method<?, ?> method, Status status, Metadata responseMetadata, long nanos) {
                clientCounts.computeIfAbsent(method.name() + " " + status, k -> new LongAdder()).increment();
                totalNanos.add(nanos);
            }
        };
        try (RpcClient c = clientBuilder(server).intercept(metrics).connect()) {
            for (int i = 0; i < 20; i++) {
                assertEquals("a", c.call(INLINE, "a"));
                assertEquals("b", c.callAsync(BLOCKING, "b").get(10, TimeUnit.SECONDS));
            }
            for (int i = 0; i < 5; i++) {
                assertThrows(RpcException.class, () -> c.call(FAILS, "x"));
            }
            CompletableFuture<String> cancelled = c.callAsync(WAIT, "w");
            assertTrue(waiting.await(10, TimeUnit.SECONDS));
            assertTrue(cancelled.cancel(true));
            TestSupport.await("every outcome counted on the server", Duration.ofSeconds(10),
                    () -> count(serverCounts, "CANCELLED", "md.wait") == 1);
        }
        assertEquals(20, count(clientCounts, "OK", "md.inline"));
        assertEquals(20, count(clientCounts, "OK", "md.blocking"));
        assertEquals(5, count(clientCounts, "RESOURCE_EXHAUSTED", "md.fails"));
        assertEquals(1, count(clientCounts, "CANCELLED", "md.wait"));
        assertTrue(totalNanos.sum() > 0);
        assertEquals(20, count(serverCounts, "OK", "md.inline"));
        assertEquals(20, count(serverCounts, "OK", "md.blocking"));
        assertEquals(5, count(serverCounts, "RESOURCE_EXHAUSTED", "md.fails"));
    }

    @Test
    public void aClientInterceptorCanRefuseACallBeforeItIsSent() {
        AtomicReference<Status> after = new AtomicReference<>();
        ClientInterceptor refuse = new ClientInterceptor() {
            @Override
            public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                throw new RpcException(Status.PERMISSION_DENIED, "not from this client");
            }

            @Override
            public void afterCall(Method<?, ?> method, Status status, Metadata responseMetadata, long nanos) {
                after.set(status);
            }
        };
        try (RpcClient c = clientBuilder(server).intercept(refuse).connect()) {
            long sent = c.metrics().bytesSent();
            RpcException e = assertThrows(RpcException.class, () -> c.call(INLINE, "x"));
            assertEquals(Status.PERMISSION_DENIED, e.status());
            assertEquals(Status.PERMISSION_DENIED, after.get());
            assertEquals(sent, c.metrics().bytesSent(), "nothing sent");
            assertEquals(Status.PERMISSION_DENIED, assertThrows(RpcException.class, () -> c.callAsync(INLINE, "x")).status(),
                    "an asynchronous call is refused as it starts, like one the connection refuses");
        }
    }
}
