package dev.rdmarpc.rpc.service;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Call settings of a service client without a {@code CallOptions} parameter on its methods (issue
 * 43, point 6): {@link Services#withTimeout} and {@link Services#withMetadata} return configured
 * copies, and the server reads the call it serves with {@link Services#context()}.
 */
@Timeout(30)
class ServiceClientOptionsTest {
    @RpcService
    interface Slow {
        String sleep(Integer millis);

        CompletableFuture<String> sleepAsync(Integer millis);

        String header(String key);

        Streaming<String, String> echo();
    }

    static final class SlowImpl implements Slow {
        @Override
        public String sleep(Integer millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                throw new RpcException(Status.CANCELLED, "interrupted");
            }
            return "slept";
        }

        @Override
        public CompletableFuture<String> sleepAsync(Integer millis) {
            return CompletableFuture.supplyAsync(() -> sleep(millis));
        }

        @Override
        public String header(String key) {
            return Services.context().requestMetadata().get(key)
                    + "/" + (Services.context().remainingNanos() <= TimeUnit.SECONDS.toNanos(5));
        }

        @Override
        public Streaming<String, String> echo() {
            return Streaming.serve(stream -> {
                for (String m; (m = stream.receive()) != null; ) {
                    stream.send(m + ":" + stream.requestMetadata().get("tenant"));
                }
            });
        }
    }

    @Test
    void aConfiguredCopyCarriesItsTimeoutAndMetadata() throws Exception {
        try (RpcServer server = Services.register(RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)),
                Slow.class, new SlowImpl(), MethodHandles.lookup()).start();
             RpcClient client = RpcClient.connect(server.address())) {
            Slow slow = Services.client(client, Slow.class, MethodHandles.lookup());
            Slow fast = Services.withTimeout(slow, Duration.ofMillis(100));
            long t0 = System.nanoTime();
            RpcException e = assertThrows(RpcException.class, () -> fast.sleep(2_000));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(Status.DEADLINE_EXCEEDED, e.status());
            assertTrue(ms >= 99 && ms < 1_500, "ended after " + ms + " ms");
            ExecutionException async = assertThrows(ExecutionException.class,
                    () -> fast.sleepAsync(2_000).get(5, TimeUnit.SECONDS));
            assertEquals(Status.DEADLINE_EXCEEDED, ((RpcException) async.getCause()).status());
            assertEquals("slept", slow.sleep(200), "the original is unchanged");

            Slow tenant = Services.withMetadata(Services.withTimeout(slow, Duration.ofSeconds(5)), Metadata.of("tenant", "t7"));
            assertEquals("t7/true", tenant.header("tenant"), "metadata and timeout reach the server's context");
            assertEquals("null/false", slow.header("tenant"));
            try (ClientStream<String, String> s = tenant.echo().open()) {
                s.send("a");
                assertEquals("a:t7", s.receive());
                s.halfClose();
                assertNull(s.receive());
            }
            assertThrows(IllegalArgumentException.class, () -> Services.withTimeout(new SlowImpl(), Duration.ofSeconds(1)));
            assertThrows(IllegalArgumentException.class, () -> Services.withTimeout(slow, Duration.ZERO));
        }
    }
}
