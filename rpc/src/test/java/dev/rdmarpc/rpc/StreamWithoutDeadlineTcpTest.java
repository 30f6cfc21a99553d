package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CallOptions#withoutDeadline}: a stream that asks for no deadline has none on either side
 * (not the client's {@code defaultStreamTimeout}); a unary call cannot ask for it.
 */
@Timeout(60)
class StreamWithoutDeadlineTcpTest {
    static final Method<String, String> LEFT = Method.of("left", Codecs.STRING, Codecs.STRING);

    @Test
    void aStreamWithoutADeadlineHasNoneOnTheServerAndOutlivesTheDefault() throws Exception {
        CompletableFuture<Long> serverLeft = new CompletableFuture<>();
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                     .registerStream(LEFT, stream -> {
                         serverLeft.complete(stream.remainingNanos());
                         while (stream.receive() != null) {
                             // until the client's half-close
                         }
                         stream.send("done");
                     })
                     .start();
             RpcClient client = RpcClient.builder().address(server.address())
                     .defaultStreamTimeout(Duration.ofMillis(200)).connect()) {
            ClientStream<String, String> s = client.openStream(LEFT, CallOptions.DEFAULT.withoutDeadline());
            assertEquals(Long.MAX_VALUE, serverLeft.get(10, TimeUnit.SECONDS), "the server saw a deadline");
            Thread.sleep(400); // twice the client's default stream timeout
            s.send("x");
            s.halfClose();
            assertEquals("done", s.receive());
            assertNull(s.receive());

            // the default still applies to a stream that asks for nothing
            ClientStream<String, String> d = client.openStream(LEFT, CallOptions.DEFAULT);
            Thread.sleep(400);
            RpcException e = assertThrows(RpcException.class, d::receive);
            assertEquals(Status.DEADLINE_EXCEEDED, e.status());
        }
    }

    @Test
    void aUnaryCallCannotGoWithoutADeadline() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))
                     .register(LEFT, (ctx, req) -> req).start();
             RpcClient client = RpcClient.builder().address(server.address()).connect()) {
            CallOptions none = CallOptions.DEFAULT.withoutDeadline();
            assertThrows(IllegalArgumentException.class, () -> client.call(LEFT, "x", none));
            assertThrows(IllegalArgumentException.class, () -> client.callAsync(LEFT, "x", none));
        }
    }
}
