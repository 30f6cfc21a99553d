package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.rdmarpc.rpc.codec.Codecs;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client interceptor's {@code afterCall} gets the request metadata that was sent (what the last
 * {@code beforeCall} returned), for blocking and asynchronous calls, streams, and a call another interceptor
 * refused: what lets an interceptor find per-call state keyed by what it added (a trace context).
 */
@Timeout(30)
class InterceptorRequestMetadataTcpTest {
    static final Method<String, String> ECHO = Method.of("Svc/echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> CHAT = Method.of("Svc/chat", Codecs.STRING, Codecs.STRING);

    /** Adds a per-call id and records what afterCall was given. */
    static final class Tagger implements ClientInterceptor {
        final List<String> sent = new CopyOnWriteArrayList<>();
        final List<String> seenAfter = new CopyOnWriteArrayList<>();
        int next;

        @Override
        public synchronized Metadata beforeCall(Method<?, ?> method, Metadata metadata) {
            String id = "call-" + next++;
            sent.add(id);
            return metadata.with("x-call-id", id);
        }

        @Override
        public void afterCall(Method<?, ?> method, Metadata requestMetadata, Status status, Metadata responseMetadata,
                              long nanos) {
            seenAfter.add(requestMetadata.get("x-call-id") + " " + status);
        }
    }

    @Test
    void afterCallGetsTheRequestMetadataSent() throws Exception {
        Tagger tagger = new Tagger();
        try (RpcServer s = RpcServer.builder().register(ECHO, (ctx, r) -> ctx.requestMetadata().get("x-call-id"))
                .registerStream(CHAT, st -> {
                    for (String m; (m = st.receive()) != null; ) {
                        st.send(m);
                    }
                }).start();
             RpcClient c = RpcClient.builder().address(s.address()).intercept(tagger).connect()) {
            assertEquals("call-0", c.call(ECHO, "a"));
            assertEquals("call-1", c.callAsync(ECHO, "b").get(10, TimeUnit.SECONDS));
            try (ClientStream<String, String> st = c.openStream(CHAT)) {
                st.send("x");
                st.halfClose();
                assertEquals("x", st.receive());
                assertNull(st.receive());
            }
            waitForAfterCalls(tagger, 3);
            assertEquals(List.of("call-0 OK", "call-1 OK", "call-2 OK"), tagger.seenAfter);
        }
    }

    @Test
    void aCallALaterInterceptorRefusedStillTellsWhatWasAddedSoFar() throws Exception {
        Tagger tagger = new Tagger();
        ClientInterceptor refuser = (method, metadata) -> {
            throw new RpcException(Status.PERMISSION_DENIED, "no");
        };
        try (RpcServer s = RpcServer.builder().register(ECHO, (ctx, r) -> r).start();
             RpcClient c = RpcClient.builder().address(s.address()).intercept(tagger).intercept(refuser).connect()) {
            RpcException e = assertThrows(RpcException.class, () -> c.call(ECHO, "a"));
            assertEquals(Status.PERMISSION_DENIED, e.status());
            assertEquals(List.of("call-0 PERMISSION_DENIED"), tagger.seenAfter);
        }
    }

    private static void waitForAfterCalls(Tagger t, int n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (t.seenAfter.size() < n && System.nanoTime() < end) {
            Thread.sleep(5);
        }
    }
}
