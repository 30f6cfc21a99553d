package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The health method every server answers ({@link Health}, {@link ServerHealth}) and the pool's health checks
 * ({@link RpcClientPool.Builder#healthCheck}), over TCP.
 */
@Timeout(60)
class HealthTcpTest {
    static final Method<String, String> HELLO = Method.of("Greeter/hello", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> SLOW = Method.of("Greeter/slow", Codecs.STRING, Codecs.STRING);
    private static final Duration T = Duration.ofSeconds(5);

    private final AtomicInteger served = new AtomicInteger();

    private RpcServer.Builder server() {
        return RpcServer.builder().register(HELLO, (ctx, r) -> {
            served.incrementAndGet();
            return "hi " + r;
        });
    }

    @Test
    void aServerAnswersPerServiceAndTheApplicationSetsIt() {
        try (RpcServer s = server().start(); RpcClient c = RpcClient.connect(s.address())) {
            assertEquals(Health.ServingStatus.SERVING, Health.check(c, "", T));
            assertEquals(Health.ServingStatus.SERVING, Health.check(c, "Greeter", T));
            assertEquals(Health.ServingStatus.UNKNOWN, Health.check(c, "Nope", T));
            s.health().set("Greeter", Health.ServingStatus.NOT_SERVING);
            assertEquals(Health.ServingStatus.NOT_SERVING, Health.check(c, "Greeter", T));
            assertEquals(Health.ServingStatus.SERVING, Health.check(c, "", T), "the others unchanged");
            s.health().set("Greeter", Health.ServingStatus.SERVING);
            assertEquals(Health.ServingStatus.SERVING, Health.check(c, "Greeter", T));
            s.health().set("Batch", Health.ServingStatus.NOT_SERVING);
            assertEquals(Health.ServingStatus.NOT_SERVING, Health.check(c, "Batch", T));
            s.health().clear("Batch");
            assertEquals(Health.ServingStatus.UNKNOWN, Health.check(c, "Batch", T));
            assertThrows(IllegalArgumentException.class, () -> s.health().set("x", Health.ServingStatus.UNKNOWN));
        }
    }

    @Test
    void aDrainingServerReportsNotServingForEveryService() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inside = new CountDownLatch(1);
        RpcServer s = server().drainTimeout(Duration.ofSeconds(20)).registerBlocking(SLOW, (ctx, r) -> {
            inside.countDown();
            release.await();
            return r;
        }).start();
        try (RpcClient c = RpcClient.connect(s.address())) {
            CompletableFuture<String> slow = c.callAsync(SLOW, "x");
            assertTrue(inside.await(10, TimeUnit.SECONDS));
            Thread closer = Thread.ofVirtual().start(s::close);
            waitFor(() -> !s.isRunning());
            assertEquals(Health.ServingStatus.NOT_SERVING, s.health().check("Greeter"));
            assertEquals(Health.ServingStatus.NOT_SERVING, s.health().check(""));
            assertEquals(Health.ServingStatus.NOT_SERVING, Health.check(c, "Greeter", T),
                    "refused with SHUTTING_DOWN on the wire, read as NOT_SERVING");
            release.countDown();
            assertEquals("x", slow.get(10, TimeUnit.SECONDS));
            closer.join();
        } finally {
            release.countDown();
            s.close();
        }
    }

    @Test
    void theHealthMethodNameIsTheServers() {
        RpcServer.Builder b = server().register(Method.of(Health.METHOD_NAME, Codecs.STRING, Codecs.STRING), (c, r) -> r);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::start);
        assertTrue(e.getMessage().contains("health"), e.getMessage());
    }

    @Test
    void aPoolStopsSendingToANotServingEndpointAndComesBackWhenItServes() throws Exception {
        try (RpcServer s = server().start();
             RpcClientPool pool = RpcClientPool.builder().healthCheck("Greeter")
                     .healthCheckInterval(Duration.ofMillis(50)).build()) {
            RpcChannel ch = pool.channel(s.address());
            assertEquals("hi a", ch.call(HELLO, "a"));
            s.health().set("Greeter", Health.ServingStatus.NOT_SERVING);
            waitFor(() -> refused(ch));
            int before = served.get();
            for (int i = 0; i < 20; i++) {
                RpcException e = assertThrows(RpcException.class, () -> ch.call(HELLO, "b"));
                assertEquals(Status.UNAVAILABLE, e.status());
                assertTrue(e.getMessage().contains("NOT_SERVING"), e.getMessage());
                assertThrows(Exception.class, () -> ch.callAsync(HELLO, "c").get(5, TimeUnit.SECONDS));
            }
            assertEquals(before, served.get(), "nothing sent while the endpoint does not serve");
            s.health().set("Greeter", Health.ServingStatus.SERVING);
            waitFor(() -> !refused(ch));
            assertEquals("hi d", ch.call(HELLO, "d"));
        }
    }

    @Test
    void aPoolDoesNotSendForAServiceTheServerDoesNotKnow() throws Exception {
        try (RpcServer s = server().start();
             RpcClientPool pool = RpcClientPool.builder().healthCheck("Other")
                     .healthCheckInterval(Duration.ofMillis(50)).build()) {
            RpcChannel ch = pool.channel(s.address());
            waitFor(() -> refused(ch));
            RpcException e = assertThrows(RpcException.class, () -> ch.call(HELLO, "b"));
            assertTrue(e.getMessage().contains("UNKNOWN"), e.getMessage());
        }
    }

    @Test
    void aPoolWithoutHealthChecksSendsWhateverTheServerReports() {
        try (RpcServer s = server().start(); RpcClientPool pool = RpcClientPool.builder().build()) {
            s.health().set("Greeter", Health.ServingStatus.NOT_SERVING);
            assertEquals("hi a", pool.channel(s.address()).call(HELLO, "a"));
        }
    }

    @Test
    void theIntervalMustBePositive() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RpcClientPool.builder().healthCheck("").healthCheckInterval(Duration.ZERO).build());
        assertTrue(e.getMessage().contains("healthCheckInterval"), e.getMessage());
    }

    private static boolean refused(RpcChannel ch) {
        try {
            ch.call(HELLO, "probe");
            return false;
        } catch (RpcException e) {
            return e.status() == Status.UNAVAILABLE;
        }
    }

    private static void waitFor(Supplier<Boolean> condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.get()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met in 20 s");
            }
            Thread.sleep(10);
        }
    }
}
