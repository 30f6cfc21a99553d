package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Call control end to end. Cancellation: {@code cancel} on a call's future (or an interrupted blocking call) frees
 * the call's slot at once and sends the server a cancel; a blocking handler still running is
 * interrupted, sees {@link CallContext#isCancelled()}, runs its cancel listeners, and sends nothing;
 * many cancelled calls leave no slot, call or buffer behind on either side. Deadlines: the time a
 * call has left travels with it, a blocking handler still running at it is stopped, and calls made
 * from a handler inherit it, so that a chain of calls gives up together.
 *
 * <p>Subclassed per transport (TCP on the host, RDMA in the Soft-RoCE VM). The test and lifecycle
 * methods are public: a subclass in another package (the RDMA one) runs them through reflection
 * even when the test run opens only that package.
 */
public abstract class CallControlContract {
    /** Blocks until interrupted (or a minute), then answers; on a virtual thread. */
    static final Method<String, String> WAIT = Method.of("waitForCancel", Codecs.STRING, Codecs.STRING);
    /** Echoes a string, on the I/O thread. */
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    /** The time the call has left, as the server sees it, on the I/O thread. */
    static final Method<Void, Long> REMAINING = Method.of("remaining", Codecs.VOID, Codecs.LONG);
    /** The same from a blocking handler. */
    static final Method<Void, Long> REMAINING_BLOCKING = Method.of("remainingBlocking", Codecs.VOID, Codecs.LONG);
    /** Answers the request plus "!" from another thread after 20 ms: an asynchronous handler. */
    static final Method<String, String> LATER = Method.of("later", Codecs.STRING, Codecs.STRING);
    /** An asynchronous handler whose future only a cancel or the deadline ends. */
    static final Method<String, String> NEVER = Method.of("never", Codecs.STRING, Codecs.STRING);
    /** A raw handler that defers: it copies the request and answers it from another thread, reversed. */
    static final Method<byte[], byte[]> DEFERRED = Method.of("deferredReverse", Codecs.BYTES, Codecs.BYTES);
    /** Calls the next server's {@link #RELAY} (or {@link #WAIT} at the end of a chain), on a virtual thread. */
    static final Method<String, String> RELAY = Method.of("relay", Codecs.STRING, Codecs.STRING);

    final CountDownLatch started = new CountDownLatch(1);
    /** Counted by {@link #WAIT}'s handler alone once it runs ({@link #started} is {@link #NEVER}'s too). */
    private final CountDownLatch waitRunning = new CountDownLatch(1);
    private final AtomicLong interruptedAt = new AtomicLong();
    private final AtomicLong listenerAt = new AtomicLong();
    private final AtomicBoolean sawCancelled = new AtomicBoolean();
    private final AtomicReference<Thread> listenerThread = new AtomicReference<>();
    RpcServer server;
    private RpcClient client;
    private final List<CompletableFuture<String>> neverFutures = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.concurrent.ExecutorService answerer = java.util.concurrent.Executors.newFixedThreadPool(2);
    private final AtomicReference<Throwable> deferMisuse = new AtomicReference<>();

    /** @return the client connected to {@link #server} for this test */
    RpcClient client() {
        return client;
    }

    /** @return a server of this transport, not started */
    protected abstract RpcServer.Builder serverBuilder();

    /** @return a client of this transport connected to {@code server} */
    protected abstract RpcClient connect(RpcServer server);

    /** @return the longest a cancel may take to reach a running handler (its thread interrupted) */
    protected abstract Duration cancelBound();

    /** @return the deadline of the chained call in {@link #aChainOfThreeCallsGivesUpTogether}: long enough to pass three hops */
    protected abstract Duration chainDeadline();

    /** @return how many calls {@link #manyCancelledCallsLeaveNothingBehind} cancels */
    protected int cancelledCalls() {
        return 10_000;
    }

    @BeforeEach
    public void start() {
        server = serverBuilder()
                .registerBlocking(WAIT, (ctx, s) -> {
                    ctx.onCancel(() -> {
                        listenerAt.compareAndSet(0, System.nanoTime());
                        listenerThread.set(Thread.currentThread());
                    });
                    started.countDown();
                    waitRunning.countDown();
                    try {
                        Thread.sleep(60_000);
                        return "slept";
                    } catch (InterruptedException e) {
                        interruptedAt.compareAndSet(0, System.nanoTime());
                        sawCancelled.set(ctx.isCancelled());
                        return "interrupted";
                    }
                })
                .register(ECHO, (ctx, s) -> s)
                .register(REMAINING, (ctx, v) -> ctx.remainingNanos())
                .registerBlocking(REMAINING_BLOCKING, (ctx, v) -> ctx.remainingNanos())
                .registerAsync(LATER, (ctx, s) -> s.equals("fail")
                        ? CompletableFuture.failedFuture(new RpcException(Status.RESOURCE_EXHAUSTED, "told to fail"))
                        : CompletableFuture.supplyAsync(() -> s + "!",
                                CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS)))
                .registerRaw(DEFERRED, call -> {
                    byte[] request = call.payload().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    DeferredCall d = call.defer();
                    try {
                        call.respondError(Status.HANDLER_FAILED, "a respond after defer");
                        deferMisuse.set(new AssertionError("a respond after defer was taken"));
                    } catch (IllegalStateException expected) {
                        // the deferred call is the response now
                    }
                    answerer.execute(() -> {
                        byte[] reversed = new byte[request.length];
                        for (int i = 0; i < request.length; i++) {
                            reversed[i] = request[request.length - 1 - i];
                        }
                        d.respond(java.lang.foreign.MemorySegment.ofArray(reversed), 0, reversed.length);
                    });
                })
                .registerAsync(NEVER, (ctx, s) -> {
                    CompletableFuture<String> f = new CompletableFuture<>();
                    neverFutures.add(f);
                    started.countDown();
                    return f;
                })
                .start();
        client = connect(server);
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

    @Test
    public void aRunningHandlerIsInterruptedAndItsResultDropped() throws Exception {
        CompletableFuture<String> call = client.callAsync(WAIT, "x");
        assertTrue(started.await(10, TimeUnit.SECONDS), "handler started");
        TestSupport.await("the server's call in flight", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 1);
        long serverSentBefore = server.metrics().bytesSent();
        long cancelAt = System.nanoTime();
        assertTrue(call.cancel(true));
        assertEquals(0, client.metrics().inFlight(), "the client's slot is free at once");
        assertEquals(1, client.metrics().cancelled());
        assertTrue(call.isCancelled());
        assertThrows(CancellationException.class, call::join);

        TestSupport.await("the handler interrupted", cancelBound(), () -> interruptedAt.get() != 0);
        // the I/O thread interrupts the work first and then runs the listeners: the handler's thread
        // can see its interrupt before the listener has run
        TestSupport.await("the cancel listener ran", cancelBound(), () -> listenerAt.get() != 0);
        long tookNanos = interruptedAt.get() - cancelAt;
        System.out.printf("cancel to handler interrupt: %.2f ms, to listener: %.2f ms%n", tookNanos / 1e6,
                (listenerAt.get() - cancelAt) / 1e6);
        assertTrue(sawCancelled.get(), "CallContext.isCancelled() in the handler");
        assertTrue(listenerAt.get() != 0, "the cancel listener ran");
        assertFalse(listenerThread.get().isVirtual(), "the listener runs on an I/O thread, not the handler's: " + listenerThread.get());
        TestSupport.await("the server's call over", Duration.ofSeconds(5),
                () -> server.metrics().inFlight() == 0 && server.metrics().cancelled() == 1);
        Thread.sleep(100);
        assertEquals(serverSentBefore, server.metrics().bytesSent(), "no response to a cancelled call");

        assertEquals("still works", client.call(ECHO, "still works"), "the connection goes on");
        assertTrue(call.cancel(true), "still cancelled (CompletableFuture's contract)");
        assertEquals(1, client.metrics().cancelled(), "a second cancel sends nothing");
        assertEquals(1, server.metrics().cancelled());
    }

    @Test
    public void anInterruptedBlockingCallCancelsOnTheServer() throws Exception {
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread caller = Thread.ofPlatform().name("blocking-caller").start(() -> {
            try {
                client.call(WAIT, "x", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(60)));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        assertTrue(started.await(10, TimeUnit.SECONDS), "handler started");
        caller.interrupt();
        caller.join(5_000);
        assertTrue(outcome.get() instanceof RpcException e && e.status() == Status.CANCELLED, "caller sees " + outcome.get());
        assertEquals(0, client.metrics().inFlight());
        TestSupport.await("the handler interrupted", cancelBound(), () -> interruptedAt.get() != 0);
        TestSupport.await("the server's call over", Duration.ofSeconds(5),
                () -> server.metrics().inFlight() == 0 && server.metrics().cancelled() == 1);
    }

    @Test
    public void aCancelAfterTheResponseChangesNothing() {
        CompletableFuture<String> call = client.callAsync(ECHO, "done");
        assertEquals("done", call.join());
        assertFalse(call.cancel(true));
        assertEquals(0, client.metrics().cancelled());
        assertEquals("again", client.call(ECHO, "again"));
        assertEquals(0, server.metrics().cancelled());
    }

    /**
     * Waves of calls to a handler that waits until it is interrupted, each cancelled, some as soon
     * as sent, some once running: every one reaches the server (cancels follow their requests on the
     * connection, and none of these handlers ends by itself), and afterwards neither side holds a
     * call, a slot or a buffer more than before.
     */
    @Test
    public void manyCancelledCallsLeaveNothingBehind() throws Exception {
        assertEquals("warm", client.call(ECHO, "warm"));
        int total = cancelledCalls();
        int wave = 100;
        // One wave first, not counted: over RDMA the receive queues grow to the load once (and keep
        // their buffers); what must not grow is what every further wave leaves behind.
        List<CompletableFuture<String>> first = new ArrayList<>(wave);
        for (int i = 0; i < wave; i++) {
            first.add(client.callAsync(WAIT, "w", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(120))));
        }
        TestSupport.await("the first wave running", Duration.ofSeconds(30), () -> server.metrics().inFlight() == wave);
        first.forEach(c -> c.cancel(true));
        TestSupport.await("the first wave over", Duration.ofSeconds(30), () -> server.metrics().inFlight() == 0);
        long serverChunks = server.bufferPool().chunksInUse();
        long clientChunks = client.bufferPool().chunksInUse();
        long clientBefore = client.metrics().cancelled();
        long serverBefore = server.metrics().cancelled();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
        for (int done = 0; done < total; done += wave) {
            List<CompletableFuture<String>> calls = new ArrayList<>(wave);
            for (int i = 0; i < wave; i++) {
                calls.add(client.callAsync(WAIT, "w", CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(120))));
            }
            if ((done / wave) % 2 == 1) { // every other wave: once the server runs them all
                TestSupport.await("a wave running", Duration.ofSeconds(30), () -> server.metrics().inFlight() == wave);
            }
            for (CompletableFuture<String> c : calls) {
                assertTrue(c.cancel(true), "cancelled before any response");
            }
            assertEquals(0, client.metrics().inFlight());
            assertTrue(System.nanoTime() < deadline, "bounded in time: " + done + " calls cancelled");
        }
        assertEquals(total, client.metrics().cancelled() - clientBefore);
        TestSupport.await("every call over on the server", Duration.ofSeconds(60),
                () -> server.metrics().inFlight() == 0 && server.metrics().cancelled() - serverBefore == total);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until && !(server.bufferPool().chunksInUse() <= serverChunks
                && server.bufferPool().largeBuffersInUse() == 0 && client.bufferPool().chunksInUse() <= clientChunks)) {
            Thread.sleep(20);
        }
        assertTrue(server.bufferPool().chunksInUse() <= serverChunks && server.bufferPool().largeBuffersInUse() == 0
                        && client.bufferPool().chunksInUse() <= clientChunks,
                "buffers back on both sides: server chunks " + server.bufferPool().chunksInUse() + " (after the first wave "
                        + serverChunks + "), large " + server.bufferPool().largeBuffersInUse() + "; client chunks "
                        + client.bufferPool().chunksInUse() + " (" + clientChunks + ")");
        assertEquals("after", client.call(ECHO, "after"));
    }

    @Test
    public void theDeadlineTravelsWithTheCall() {
        for (Method<Void, Long> m : List.of(REMAINING, REMAINING_BLOCKING)) {
            long left = client.call(m, null, CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
            assertTrue(left <= TimeUnit.SECONDS.toNanos(20) && left > TimeUnit.SECONDS.toNanos(15),
                    m.name() + ": the server sees " + left + " ns of a 20 s timeout");
            long byDefault = client.call(m, null);
            assertTrue(byDefault <= TimeUnit.SECONDS.toNanos(30) && byDefault > TimeUnit.SECONDS.toNanos(25),
                    m.name() + ": the default timeout, 30 s, travels too: " + byDefault + " ns");
        }
    }

    @Test
    public void aHandlerRunningPastItsDeadlineIsStopped() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        long t0 = System.nanoTime();
        RpcException e = assertThrows(RpcException.class,
                () -> client.call(WAIT, "x", CallOptions.DEFAULT.withTimeout(timeout)));
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), "the client reports its own deadline: " + e.getMessage());
        TestSupport.await("the handler interrupted", cancelBound(), () -> interruptedAt.get() != 0);
        long tookNanos = interruptedAt.get() - t0;
        System.out.printf("deadline 300 ms: handler interrupted after %.1f ms%n", tookNanos / 1e6);
        assertTrue(tookNanos >= timeout.toNanos() - TimeUnit.MILLISECONDS.toNanos(50), "not before its deadline: " + tookNanos);
        assertTrue(tookNanos < timeout.plus(cancelBound()).toNanos(), "stopped at its deadline: " + tookNanos);
        assertTrue(sawCancelled.get(), "isCancelled() once stopped");
        TestSupport.await("the server's call over", Duration.ofSeconds(5),
                () -> server.metrics().inFlight() == 0 && server.metrics().timeouts() == 1);
        assertEquals(0, server.metrics().cancelled(), "a deadline, not a cancel");
        assertEquals("after", client.call(ECHO, "after"));
    }

    /**
     * client -> A -> B -> C, each a blocking relay, C waiting until interrupted: the client's
     * deadline reaches C through A and B, and all four give up at about that deadline, not at the
     * 30 s default of the inner calls.
     */
    @Test
    public void aChainOfThreeCallsGivesUpTogether() throws Exception {
        Map<String, Long> endedAt = new ConcurrentHashMap<>();
        Map<String, String> endedWith = new ConcurrentHashMap<>();
        List<AutoCloseable> chain = new ArrayList<>();
        try {
            RpcClient toC = connect(server);
            chain.add(toC);
            RpcServer b = relay("B", toC, WAIT, endedAt, endedWith);
            chain.add(b);
            RpcClient toB = connect(b);
            chain.add(toB);
            RpcServer a = relay("A", toB, RELAY, endedAt, endedWith);
            chain.add(a);
            RpcClient toA = connect(a);
            chain.add(toA);
            Duration deadline = chainDeadline();
            long t0 = System.nanoTime();
            RpcException e = assertThrows(RpcException.class,
                    () -> toA.call(RELAY, "x", CallOptions.DEFAULT.withTimeout(deadline)));
            long clientGaveUp = System.nanoTime() - t0;
            TestSupport.await("C's handler interrupted", cancelBound().plus(deadline), () -> interruptedAt.get() != 0);
            TestSupport.await("A's and B's handlers over", cancelBound().plus(deadline), () -> endedAt.size() == 2);
            long bound = deadline.plus(cancelBound()).toNanos();
            System.out.printf("chain with a %d ms deadline: client %.1f ms (%s), A %.1f ms (%s), B %.1f ms (%s), C %.1f ms%n",
                    deadline.toMillis(), clientGaveUp / 1e6, e.status(), (endedAt.get("A") - t0) / 1e6, endedWith.get("A"),
                    (endedAt.get("B") - t0) / 1e6, endedWith.get("B"), (interruptedAt.get() - t0) / 1e6);
            assertEquals(Status.DEADLINE_EXCEEDED, e.status(), "the client reports its own deadline: " + e.getMessage());
            assertTrue(clientGaveUp < bound, "client gave up at its deadline: " + clientGaveUp);
            for (String hop : List.of("A", "B")) {
                assertTrue(endedAt.get(hop) - t0 < bound, hop + " gave up at the deadline: " + (endedAt.get(hop) - t0));
                assertTrue(endedWith.get(hop).matches("TIMEOUT|DEADLINE_EXCEEDED|CANCELLED"), hop + ": " + endedWith.get(hop));
            }
            assertTrue(interruptedAt.get() - t0 < bound, "C stopped at the deadline: " + (interruptedAt.get() - t0));
            TestSupport.await("every hop's calls over", Duration.ofSeconds(10),
                    () -> server.metrics().inFlight() == 0 && a.metrics().inFlight() == 0 && b.metrics().inFlight() == 0);
        } finally {
            for (int i = chain.size() - 1; i >= 0; i--) {
                chain.get(i).close();
            }
        }
    }

    /** A server whose blocking {@link #RELAY} calls {@code next} through {@code to}, recording when and how that ended. */
    private RpcServer relay(String name, RpcClient to, Method<String, String> next, Map<String, Long> endedAt,
                            Map<String, String> endedWith) {
        return serverBuilder().registerBlocking(RELAY, (ctx, s) -> {
            try {
                return to.call(next, s); // no timeout of its own: the deadline it serves applies
            } catch (RpcException e) {
                endedWith.put(name, e.status().name());
                throw e;
            } finally {
                endedAt.put(name, System.nanoTime());
                endedWith.putIfAbsent(name, "OK");
            }
        }).start();
    }

    @Test
    public void anAsyncHandlerAnswersFromAnotherThread() {
        assertEquals("x!", client.call(LATER, "x"));
        RpcException e = assertThrows(RpcException.class, () -> client.call(LATER, "fail"));
        assertEquals(Status.RESOURCE_EXHAUSTED, e.status());
        assertTrue(e.getMessage().contains("told to fail"), e.getMessage());
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(client.callAsync(LATER, "n" + i));
        }
        for (int i = 0; i < calls.size(); i++) {
            assertEquals("n" + i + "!", calls.get(i).join());
        }
        TestSupport.await("the server's calls over", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 0);
    }

    @Test
    public void aCancelOrTheDeadlineCancelsAnAsyncHandlersFuture() throws Exception {
        CompletableFuture<String> call = client.callAsync(NEVER, "x");
        assertTrue(started.await(10, TimeUnit.SECONDS), "handler started");
        long sentBefore = server.metrics().bytesSent();
        long cancelAt = System.nanoTime();
        assertTrue(call.cancel(true));
        TestSupport.await("the handler's future cancelled", cancelBound(), () -> neverFutures.get(0).isCancelled());
        System.out.printf("cancel to the async handler's future cancelled: %.2f ms%n", (System.nanoTime() - cancelAt) / 1e6);
        TestSupport.await("the server's call over", Duration.ofSeconds(5),
                () -> server.metrics().inFlight() == 0 && server.metrics().cancelled() == 1);
        assertEquals(sentBefore, server.metrics().bytesSent(), "no response to a cancelled call");

        long t0 = System.nanoTime();
        RpcException e = assertThrows(RpcException.class,
                () -> client.call(NEVER, "y", CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))));
        assertEquals(Status.DEADLINE_EXCEEDED, e.status(), "the client reports its own deadline: " + e.getMessage());
        TestSupport.await("the second future cancelled at its deadline", cancelBound(),
                () -> neverFutures.size() == 2 && neverFutures.get(1).isCancelled());
        assertTrue(System.nanoTime() - t0 < Duration.ofMillis(300).plus(cancelBound()).toNanos());
        TestSupport.await("the server's call over", Duration.ofSeconds(5),
                () -> server.metrics().inFlight() == 0 && server.metrics().timeouts() == 1);
        assertEquals("after", client.call(LATER, "after").replace("!", ""));
    }

    /**
     * A raw handler takes its call over and answers it from another thread: every answer arrives,
     * right, while the handler's thread long returned; a second answer is refused; the server counts
     * the calls in flight until they are answered.
     */
    @Test
    public void aRawHandlerAnswersLaterFromAnotherThread() {
        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            calls.add(client.callAsync(DEFERRED, new byte[] {(byte) i, 1, 2, 3}));
        }
        for (int i = 0; i < calls.size(); i++) {
            byte[] r = calls.get(i).join();
            assertEquals(4, r.length);
            assertEquals((byte) i, r[3], "call " + i + " answered with its own request, reversed");
            assertEquals(3, r[0]);
        }
        assertEquals(null, deferMisuse.get());
        TestSupport.await("the server's deferred calls over", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 0);
    }

    /**
     * A client that goes away with calls in flight: the server stops them as a cancel would (the
     * blocking handler interrupted, the asynchronous one's future cancelled), so none keeps its
     * place among the server's calls in flight.
     */
    @Test
    public void aClosedConnectionStopsItsCalls() throws Exception {
        RpcClient leaving = connect(server);
        leaving.callAsync(WAIT, "w");
        leaving.callAsync(NEVER, "n");
        TestSupport.await("both calls held by the server", Duration.ofSeconds(10), () -> server.metrics().inFlight() == 2);
        // held is not yet running: a blocking handler closed out before its thread starts never runs
        // (nothing to interrupt), which a loaded machine showed once
        assertTrue(waitRunning.await(10, TimeUnit.SECONDS), "the blocking handler runs");
        leaving.close();
        TestSupport.await("the blocking handler interrupted", cancelBound(), () -> interruptedAt.get() != 0);
        TestSupport.await("the async handler's future cancelled", cancelBound(),
                () -> neverFutures.size() == 1 && neverFutures.get(0).isCancelled());
        TestSupport.await("the server's calls over", Duration.ofSeconds(5), () -> server.metrics().inFlight() == 0);
        assertEquals(2, server.metrics().cancelled());
        assertEquals("still serving", client.call(ECHO, "still serving"));
    }
}
