package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_device;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Ownership bookkeeping without a device: a wrapped (not owned) context over a fake
 * {@code struct ibv_context} in native memory, so closing it calls nothing native. Dependents keep it
 * open, closing is idempotent, counts return to where they were, and an async event monitor (whose
 * fd is an eventfd nobody signals) stops cleanly on close.
 */
class ResourceLifecycleTest {
    private Arena arena;
    private MemorySegment fakeContext;
    private long contextsBefore;
    private long monitorsBefore;

    @BeforeAll
    static void library() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
    }

    @BeforeEach
    void fakeContext() {
        arena = Arena.ofShared(); // the monitor's thread reads the fake context too
        MemorySegment device = ibv_device.allocate(arena);
        ibv_device.name(device).setString(0, "fake0");
        fakeContext = ibv_context.allocate(arena);
        ibv_context.device(fakeContext, device);
        ibv_context.async_fd(fakeContext, Posix.eventfd());
        contextsBefore = VerbsResources.live(ResourceKind.CONTEXT);
        monitorsBefore = VerbsResources.live(ResourceKind.ASYNC_EVENT_MONITOR);
    }

    @AfterEach
    void free() {
        Posix.close(ibv_context.async_fd(fakeContext));
        arena.close();
        assertEquals(contextsBefore, VerbsResources.live(ResourceKind.CONTEXT));
        assertEquals(monitorsBefore, VerbsResources.live(ResourceKind.ASYNC_EVENT_MONITOR));
    }

    @Test
    void aWrappedContextIsCountedAndClosesOnce() {
        Context ctx = Context.wrap(fakeContext);
        assertEquals("fake0", ctx.name());
        assertFalse(ctx.ownsDevice());
        assertEquals(contextsBefore + 1, VerbsResources.live(ResourceKind.CONTEXT));
        assertTrue(ctx.isOpen());
        ctx.close();
        assertFalse(ctx.isOpen());
        assertEquals(contextsBefore, VerbsResources.live(ResourceKind.CONTEXT));
        ctx.close(); // idempotent: not counted twice
        assertEquals(contextsBefore, VerbsResources.live(ResourceKind.CONTEXT));
        IllegalStateException e = assertThrows(IllegalStateException.class, ctx::queryDevice);
        assertEquals("Context[fake0] is closed", e.getMessage());
        assertThrows(IllegalStateException.class, () -> VerbsResource.acquire(ctx), "no dependents of a closed resource");
    }

    @Test
    void aResourceRefusesToCloseBeforeItsDependents() {
        Context ctx = Context.wrap(fakeContext);
        VerbsResource.acquire(ctx);
        VerbsResource.acquire(ctx);
        assertEquals(2, ctx.dependents());
        IllegalStateException e = assertThrows(IllegalStateException.class, ctx::close);
        assertEquals("cannot close Context[fake0]: 2 dependent resources are still open (close them first)",
                e.getMessage());
        assertTrue(ctx.isOpen(), "a refused close leaves it open");
        VerbsResource.release(ctx);
        assertEquals("cannot close Context[fake0]: 1 dependent resource is still open (close them first)",
                assertThrows(IllegalStateException.class, ctx::close).getMessage());
        VerbsResource.release(ctx);
        ctx.close();
        assertFalse(ctx.isOpen());
    }

    @Test
    void acquiringSeveralParentsIsAllOrNothing() {
        Context open = Context.wrap(fakeContext);
        Context closed = Context.wrap(fakeContext);
        closed.close();
        assertThrows(IllegalStateException.class, () -> VerbsResource.acquire(open, null, closed));
        assertEquals(0, open.dependents(), "the open parent was released again");
        open.close();
    }

    @Test
    void concurrentClosesCloseOnce() throws Exception {
        long destroyedBefore = VerbsResources.destroyed(ResourceKind.CONTEXT);
        for (int round = 0; round < 200; round++) {
            Context ctx = Context.wrap(fakeContext);
            CountDownLatch go = new CountDownLatch(1);
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                threads[t] = Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    ctx.close();
                });
            }
            go.countDown();
            for (Thread t : threads) {
                t.join(10_000);
            }
            assertFalse(ctx.isOpen());
        }
        assertEquals(destroyedBefore + 200, VerbsResources.destroyed(ResourceKind.CONTEXT));
    }

    @Test
    void theAsyncEventMonitorStopsOnCloseAndKeepsItsContextOpenTillThen() throws Exception {
        Context ctx = Context.wrap(fakeContext);
        AtomicInteger events = new AtomicInteger();
        AsyncEventMonitor monitor = ctx.startAsyncEvents(e -> events.incrementAndGet());
        assertEquals(monitorsBefore + 1, VerbsResources.live(ResourceKind.ASYNC_EVENT_MONITOR));
        assertTrue(monitor.isRunning());
        assertThrows(IllegalStateException.class, ctx::close, "the monitor depends on the context");
        Thread.sleep(200);
        assertTrue(monitor.isRunning(), "the monitor waits in poll(2) until closed: " + monitor.failure());
        long start = System.nanoTime();
        monitor.close();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertFalse(monitor.isRunning());
        assertTrue(millis < 5_000, "close took " + millis + " ms");
        monitor.close();
        assertEquals(0, events.get());
        ctx.close();
        Context other = Context.wrap(fakeContext);
        assertThrows(IllegalArgumentException.class, () -> other.startAsyncEvents(null));
        assertEquals(0, other.dependents());
        other.close();
    }
}
