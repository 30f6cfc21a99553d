package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sizes an interceptor reads after a call ({@link CallContext#requestBytes()},
 * {@link CallContext#responseBytes()}, and the client's {@code afterCall} with sizes): the encoded message plus
 * the attachment, on both sides, for inline and blocking handlers; -1 for a response that was an error.
 */
@Timeout(60)
class CallSizesTcpTest {
    static final Method<String, String> INLINE = Method.of("Sizes/inline", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> BLOCKING = Method.of("Sizes/blocking", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> FAILS = Method.of("Sizes/fails", Codecs.STRING, Codecs.STRING);

    /** method name to {request bytes, response bytes} as the server's and the client's afterCall saw them */
    private final Map<String, long[]> server = new ConcurrentHashMap<>();
    private final Map<String, long[]> client = new ConcurrentHashMap<>();

    @Test
    void bothSidesSeeMessagePlusAttachmentBytes() throws Exception {
        try (RpcServer s = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                .intercept(new ServerInterceptor() {
                    @Override
                    public void beforeCall(CallContext call) {
                    }

                    @Override
                    public void afterCall(CallContext call, Status status) {
                        server.put(call.methodName(), new long[] {call.requestBytes(), call.responseBytes()});
                    }
                })
                .register(INLINE, (ctx, req) -> req + req)
                .registerBlocking(BLOCKING, (ctx, req) -> {
                    // the request's attachment goes back as the response's, and 3 bytes of message
                    ctx.responseAttachment(Attachment.of(copy(ctx.requestAttachment())));
                    return "abc";
                })
                .register(FAILS, (ctx, req) -> {
                    throw new IllegalStateException("no");
                })
                .start();
             RpcClient c = RpcClient.builder().intercept(new ClientInterceptor() {
                 @Override
                 public Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
                     return metadata.with("k", "a value the sizes leave out");
                 }

                 @Override
                 public void afterCall(Method<?, ?> method, Metadata requestMetadata, Status status,
                                       Metadata responseMetadata, long nanos, long requestBytes, long responseBytes) {
                     client.put(method.name(), new long[] {requestBytes, responseBytes});
                 }
             }).address(s.address()).connect()) {
            assertEquals("hihi", c.call(INLINE, "hi"));
            Reply<String> r = c.exchange(BLOCKING, "12345",
                    CallOptions.DEFAULT.withAttachment(Attachment.of(MemorySegment.ofArray(new byte[1000]))));
            assertEquals(1000, r.attachment().length());
            assertThrows(RpcException.class, () -> c.call(FAILS, "xyz"));
            TestSupport.await("the server's afterCall of every call", Duration.ofSeconds(10), () -> server.size() == 3);
            for (Map<String, long[]> side : java.util.List.of(server, client)) {
                String which = side == server ? "server" : "client";
                assertEquals(2, side.get(INLINE.name())[0], which);
                assertEquals(4, side.get(INLINE.name())[1], which);
                assertEquals(1005, side.get(BLOCKING.name())[0], which);
                assertEquals(1003, side.get(BLOCKING.name())[1], which);
                assertEquals(3, side.get(FAILS.name())[0], which);
                assertEquals(-1, side.get(FAILS.name())[1], which + ": an error carries no response message");
            }
        }
    }

    private static MemorySegment copy(Attachment a) {
        MemorySegment m = MemorySegment.ofArray(new byte[(int) a.length()]);
        MemorySegment.copy(a.segment(), 0, m, 0, a.length());
        return m;
    }
}
