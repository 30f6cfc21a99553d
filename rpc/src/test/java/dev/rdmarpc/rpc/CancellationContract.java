package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.codec.Codecs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * Cancellation end to end: {@code cancel} on a call's future (or an interrupted blocking call) frees
 * the call's slot at once and sends the server a cancel; a blocking handler still running is
 * interrupted, sees {@link CallContext#isCancelled()}, runs its cancel listeners, and sends nothing;
 * many cancelled calls leave no slot, call or buffer behind on either side.
 *
 * <p>Subclassed per transport (TCP on the host, RDMA in the Soft-RoCE VM).
 */
public abstract class CancellationContract {
    /** Blocks until interrupted (or a minute), then answers; on a virtual thread. */
    static final Method<String, String> WAIT = Method.of("waitForCancel", Codecs.STRING, Codecs.STRING);
    /** Echoes a string, on the I/O thread. */
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);

    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicLong interruptedAt = new AtomicLong();
    private final AtomicLong listenerAt = new AtomicLong();
    private final AtomicBoolean sawCancelled = new AtomicBoolean();
    private final AtomicReference<Thread> listenerThread = new AtomicReference<>();
    private RpcServer server;
    private RpcClient client;

    /** @return a server of this transport, not started */
    protected abstract RpcServer.Builder serverBuilder();

    /** @return a client of this transport connected to {@code server} */
    protected abstract RpcClient connect(RpcServer server);

    /** @return the longest a cancel may take to reach a running handler (its thread interrupted) */
    protected abstract Duration cancelBound();

    /** @return how many calls {@link #manyCancelledCallsLeaveNothingBehind} cancels */
    protected int cancelledCalls() {
        return 10_000;
    }

    @BeforeEach
    void start() {
        server = serverBuilder()
                .registerBlocking(WAIT, (ctx, s) -> {
                    ctx.onCancel(() -> {
                        listenerAt.compareAndSet(0, System.nanoTime());
                        listenerThread.set(Thread.currentThread());
                    });
                    started.countDown();
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
                .start();
        client = connect(server);
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aRunningHandlerIsInterruptedAndItsResultDropped() throws Exception {
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
    void anInterruptedBlockingCallCancelsOnTheServer() throws Exception {
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
    void aCancelAfterTheResponseChangesNothing() {
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
    void manyCancelledCallsLeaveNothingBehind() throws Exception {
        assertEquals("warm", client.call(ECHO, "warm"));
        long serverChunks = server.bufferPool().chunksInUse();
        long clientChunks = client.bufferPool().chunksInUse();
        int total = cancelledCalls();
        int wave = 100;
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
        assertEquals(total, client.metrics().cancelled());
        TestSupport.await("every call over on the server", Duration.ofSeconds(60),
                () -> server.metrics().inFlight() == 0 && server.metrics().cancelled() == total);
        TestSupport.await("buffers back on both sides", Duration.ofSeconds(10),
                () -> server.bufferPool().chunksInUse() <= serverChunks && server.bufferPool().largeBuffersInUse() == 0
                        && client.bufferPool().chunksInUse() <= clientChunks);
        assertEquals("after", client.call(ECHO, "after"));
    }
}
