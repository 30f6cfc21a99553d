package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One name for a passed deadline (issue 43, point 2) and streams that end well or at a default
 * deadline (point 5): what the client, the client's interceptor, the handler and the server's
 * interceptor each see.
 */
@Timeout(60)
class DeadlineStatusTcpTest {
    static final Method<String, String> SLOW = Method.of("slow", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> WAIT = Method.of("wait", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> THREE = Method.of("three", Codecs.STRING, Codecs.STRING);

    /** What the server saw, by method name: its interceptor's afterCall status, and what its handler caught. */
    final Map<String, Status> serverAfter = new ConcurrentHashMap<>();
    final Map<String, Status> handlerSaw = new ConcurrentHashMap<>();
    final Map<String, Status> clientAfter = new ConcurrentHashMap<>();

    private RpcServer server() {
        return RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .intercept(new ServerInterceptor() {
                    @Override
                    public void beforeCall(CallContext call) {
                    }

                    @Override
                    public void afterCall(CallContext call, Status status) {
                        serverAfter.put(call.methodName(), status);
                    }
                })
                .registerBlocking(SLOW, (ctx, s) -> {
                    Thread.sleep(10_000);
                    return s;
                })
                .registerStream(WAIT, stream -> {
                    try {
                        while (stream.receive() != null) {
                            // until the deadline
                        }
                    } catch (RpcException e) {
                        handlerSaw.put("wait", e.status());
                        throw e;
                    }
                })
                .registerStream(THREE, stream -> {
                    while (stream.receive() != null) {
                        // the client's half-close
                    }
                    for (int i = 0; i < 3; i++) {
                        stream.send("m" + i);
                    }
                    try {
                        Thread.sleep(50); // the end comes after the client read what it expected
                    } catch (InterruptedException e) {
                        handlerSaw.put("three", Status.CANCELLED);
                        throw e;
                    }
                    handlerSaw.put("three", Status.OK);
                })
                .start();
    }

    private RpcClient client(RpcServer server, Duration defaultStreamTimeout) {
        return RpcClient.builder().address(server.address()).defaultStreamTimeout(defaultStreamTimeout)
                .intercept(new ClientInterceptor() {
                    @Override
                    public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                        return metadata;
                    }

                    @Override
                    public void afterCall(Method<?, ?> method, Status status, Metadata md, long nanos) {
                        clientAfter.put(method.name(), status);
                    }
                }).connect();
    }

    @Test
    void aCallPastItsDeadlineIsDeadlineExceededEverywhere() {
        try (RpcServer server = server(); RpcClient client = client(server, Duration.ofSeconds(30))) {
            RpcException e = assertThrows(RpcException.class, () -> client.call(SLOW, "x", Duration.ofMillis(200)));
            assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e.getMessage());
            assertEquals(Status.DEADLINE_EXCEEDED, clientAfter.get("slow"));
            TestSupport.await("server's afterCall", Duration.ofSeconds(5), () -> serverAfter.containsKey("slow"));
            assertEquals(Status.DEADLINE_EXCEEDED, serverAfter.get("slow"));
            assertEquals(1, client.metrics().timeouts());
            assertEquals(0, server.metrics().cancelled());
        }
    }

    @Test
    void aStreamPastItsDeadlineIsDeadlineExceededEverywhereAndCloseAfterItCancelsNothing() {
        try (RpcServer server = server(); RpcClient client = client(server, Duration.ofSeconds(30))) {
            ClientStream<String, String> s = client.openStream(WAIT, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
            RpcException e = assertThrows(RpcException.class, s::receive);
            assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e.getMessage());
            s.close(); // after the deadline: the stream is over, not cancelled
            TestSupport.await("both afterCalls", Duration.ofSeconds(5),
                    () -> serverAfter.containsKey("wait") && clientAfter.containsKey("wait"));
            assertEquals(Status.DEADLINE_EXCEEDED, handlerSaw.get("wait"));
            assertEquals(Status.DEADLINE_EXCEEDED, serverAfter.get("wait"));
            assertEquals(Status.DEADLINE_EXCEEDED, clientAfter.get("wait"));
            assertEquals(0, server.metrics().cancelled());
            assertEquals(0, client.metrics().cancelled());
        }
    }

    @Test
    void streamsEndAtTheDefaultStreamTimeout() {
        try (RpcServer server = server(); RpcClient client = client(server, Duration.ofMillis(300))) {
            long t0 = System.nanoTime();
            ClientStream<String, String> s = client.openStream(WAIT); // no timeout of its own
            RpcException e = assertThrows(RpcException.class, s::receive);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(Status.DEADLINE_EXCEEDED, e.status(), e.getMessage());
            assertTrue(ms >= 290 && ms < 5_000, "ended after " + ms + " ms");
            TestSupport.await("server's afterCall", Duration.ofSeconds(5), () -> serverAfter.containsKey("wait"));
            assertEquals(Status.DEADLINE_EXCEEDED, serverAfter.get("wait"));
        }
        assertThrows(IllegalArgumentException.class,
                () -> RpcClient.builder().address(new InetSocketAddress("127.0.0.1", 1)).defaultStreamTimeout(Duration.ZERO)
                        .connect());
    }

    /** A frame with the former TIMEOUT code (3), which no server of this protocol sends, reads as DEADLINE_EXCEEDED. */
    @Test
    void theFormerTimeoutCodeReadsAsDeadlineExceeded() throws Exception {
        try (java.nio.channels.ServerSocketChannel peer = java.nio.channels.ServerSocketChannel.open()
                .bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient client = RpcClient.connect((InetSocketAddress) peer.getLocalAddress());
             java.nio.channels.SocketChannel accepted = peer.accept()) {
            accepted.socket().setSoTimeout(5000);
            java.util.concurrent.CompletableFuture<String> call = client.callAsync(SLOW, "x");
            java.nio.ByteBuffer request = TestSupport.readFrame(accepted);
            assertNotNull(request);
            long id = request.getLong(dev.rdmarpc.rpc.protocol.FrameDescriptor.REQUEST_ID_OFFSET);
            byte[] message = "an old peer's timeout".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            byte[] frame = new byte[dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH + message.length];
            java.lang.foreign.MemorySegment seg = java.lang.foreign.MemorySegment.ofArray(frame);
            new dev.rdmarpc.rpc.protocol.FrameHeaderEncoder().wrap(seg, 0).type(dev.rdmarpc.rpc.protocol.FrameDescriptor.TYPE_RESPONSE)
                    .requestId(id).methodId(SLOW.id()).status(3).payloadLength(message.length);
            System.arraycopy(message, 0, frame, dev.rdmarpc.rpc.protocol.FrameDescriptor.HEADER_LENGTH, message.length);
            TestSupport.write(accepted, frame);
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> call.get(5, TimeUnit.SECONDS));
            RpcException rpc = assertInstanceOf(RpcException.class, e.getCause());
            assertEquals(Status.DEADLINE_EXCEEDED, rpc.status(), rpc.getMessage());
            assertEquals("an old peer's timeout", rpc.getMessage());
        }
    }

    @Test
    void closeAfterTheExpectedMessagesEndsTheStreamWithoutCancellingIt() {
        try (RpcServer server = server(); RpcClient client = client(server, Duration.ofSeconds(30))) {
            for (int round = 0; round < 5; round++) {
                serverAfter.clear();
                handlerSaw.clear();
                clientAfter.clear();
                try (ClientStream<String, String> s = client.openStream(THREE)) {
                    s.halfClose();
                    for (int i = 0; i < 3; i++) {
                        assertEquals("m" + i, s.receive());
                    }
                    // the reader took what it expected; the end marker is not read
                }
                TestSupport.await("both afterCalls", Duration.ofSeconds(5),
                        () -> serverAfter.containsKey("three") && clientAfter.containsKey("three"));
                assertEquals(Status.OK, serverAfter.get("three"), "round " + round);
                assertEquals(Status.OK, handlerSaw.get("three"), "round " + round);
                assertEquals(Status.OK, clientAfter.get("three"), "round " + round);
            }
            assertEquals(0, server.metrics().cancelled());
            assertEquals(0, client.metrics().cancelled());
        }
    }
}
