package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Server interceptors and cancel hooks see every call as a pair (issue 43, point 4): a blocking call
 * stopped while it waits for a thread (every carrier of the virtual-thread scheduler kept busy by
 * spinning handlers) gets beforeCall and afterCall, and a cancel listener added in beforeCall runs;
 * its handler does not run.
 */
@Timeout(60)
class InterceptorPairTcpTest {
    static final Method<String, String> SPIN = Method.of("spin", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> QUEUED = Method.of("queued", Codecs.STRING, Codecs.STRING);

    static volatile boolean spin = true;

    @Test
    void aCallStoppedWhileQueuedIsSeenAsAPair() throws Exception {
        Map<String, AtomicInteger> before = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> after = new ConcurrentHashMap<>();
        Map<String, Status> lastStatus = new ConcurrentHashMap<>();
        AtomicInteger cancelHooks = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger spinning = new AtomicInteger();
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .intercept(new ServerInterceptor() {
                    @Override
                    public void beforeCall(CallContext call) {
                        before.computeIfAbsent(call.methodName(), k -> new AtomicInteger()).incrementAndGet();
                        if (call.methodName().equals("queued")) {
                            call.onCancel(cancelHooks::incrementAndGet);
                        }
                    }

                    @Override
                    public void afterCall(CallContext call, Status status) {
                        lastStatus.put(call.methodName() + after.computeIfAbsent(call.methodName(), k -> new AtomicInteger())
                                .incrementAndGet(), status);
                    }
                })
                .registerBlocking(SPIN, (ctx, s) -> {
                    spinning.incrementAndGet();
                    long until = System.nanoTime() + 20_000_000_000L;
                    while (spin && System.nanoTime() < until) {
                        Thread.onSpinWait(); // holds its carrier: no blocking call, no yield
                    }
                    return s;
                })
                .registerBlocking(QUEUED, (ctx, s) -> {
                    ran.incrementAndGet();
                    return s;
                })
                .start();
             RpcClient client = RpcClient.connect(server.address())) {
            spin = true;
            List<CompletableFuture<String>> spinners = new ArrayList<>();
            for (int i = 0; i < carriers; i++) {
                spinners.add(client.callAsync(SPIN, "s", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30))));
            }
            TestSupport.await("every carrier spinning", Duration.ofSeconds(10), () -> spinning.get() == carriers);
            // one stopped at its deadline while queued, one cancelled while queued
            CompletableFuture<String> expires = client.callAsync(QUEUED, "d", CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100)));
            CompletableFuture<String> cancelled = client.callAsync(QUEUED, "c", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
            Thread.sleep(300);
            cancelled.cancel(true);
            Thread.sleep(100);
            spin = false;
            for (CompletableFuture<String> f : spinners) {
                assertEquals("s", f.get());
            }
            assertTrue(expires.isCompletedExceptionally());
            TestSupport.await("both queued calls over", Duration.ofSeconds(10),
                    () -> after.containsKey("queued") && after.get("queued").get() == 2);
            assertEquals(2, before.getOrDefault("queued", new AtomicInteger()).get(), "beforeCall for each queued call");
            assertEquals(0, ran.get(), "a stopped call's handler does not run");
            assertEquals(2, cancelHooks.get(), "the cancel hook runs for each stopped call");
            assertEquals(java.util.Set.of(Status.DEADLINE_EXCEEDED, Status.CANCELLED),
                    java.util.Set.of(lastStatus.get("queued1"), lastStatus.get("queued2")));
        } finally {
            spin = false;
        }
    }
}
