package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The small items of issue 43 (point 10): {@link ServerInterceptor} is a functional interface, and a
 * stream counts among {@code maxInFlight} as its Javadoc says.
 */
@Timeout(30)
class SmallApiItemsTest {
    static final Method<String, String> STREAM = Method.of("stream", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> BLOCKING = Method.of("blocking", Codecs.STRING, Codecs.STRING);

    @Test
    void serverInterceptorIsAFunctionalInterface() {
        assertTrue(ServerInterceptor.class.isAnnotationPresent(FunctionalInterface.class));
    }

    @Test
    void anOpenStreamCountsAmongMaxInFlight() throws Exception {
        CountDownLatch open = new CountDownLatch(1);
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).maxInFlight(1)
                .registerStream(STREAM, s -> {
                    open.countDown();
                    while (s.receive() != null) {
                        // until the client half-closes
                    }
                })
                .registerBlocking(BLOCKING, (ctx, s) -> s).start();
             RpcClient client = RpcClient.connect(server.address())) {
            try (ClientStream<String, String> s = client.openStream(STREAM)) {
                assertTrue(open.await(5, TimeUnit.SECONDS));
                RpcException e = assertThrows(RpcException.class, () -> client.call(BLOCKING, "x"));
                assertEquals(Status.OVERLOADED, e.status(), e.getMessage());
                s.halfClose();
                assertNull(s.receive());
            }
            // the stream's place is free once its handler returned (just after its end was sent)
            TestSupport.await("the stream's place freed", java.time.Duration.ofSeconds(5), () -> {
                try {
                    return "x".equals(client.call(BLOCKING, "x"));
                } catch (RpcException e) {
                    return false;
                }
            });
        }
    }
}
