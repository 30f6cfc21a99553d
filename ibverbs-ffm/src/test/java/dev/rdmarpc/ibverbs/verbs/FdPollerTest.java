package dev.rdmarpc.ibverbs.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link FdPoller} on the host, over eventfds standing in for a CM event channel and a completion
 * channel (both are plain readable descriptors to poll(2)): which one is ready, time-outs, wake-ups
 * from another thread, descriptors that fail, and closing.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class FdPollerTest {

    @Test
    void reportsWhichDescriptorIsReadable() {
        int a = Posix.eventfd();
        int b = Posix.eventfd();
        try (Arena arena = Arena.ofConfined();
             FdPoller poller = new FdPoller(a, b)) {
            MemorySegment scratch = arena.allocate(8, 8);
            assertEquals(2, poller.size());
            assertEquals(b, poller.fd(1));
            assertEquals(0, poller.await(Duration.ZERO), "nothing ready yet");

            Posix.signal(b, scratch);
            assertEquals(1, poller.await(Duration.ofSeconds(5)));
            assertFalse(poller.isReadable(0));
            assertTrue(poller.isReadable(1));
            assertFalse(poller.isFailed(1));
            // the poller only reports: the descriptor stays readable until its owner takes the event
            assertEquals(1, poller.await(Duration.ZERO));
            Posix.drain(b, scratch);
            Posix.signal(a, scratch);
            assertEquals(1, poller.await(null));
            assertTrue(poller.isReadable(0));
            assertFalse(poller.isReadable(1));
            Posix.signal(b, scratch);
            assertEquals(2, poller.awaitMillis(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> poller.isReadable(2));
        } finally {
            Posix.close(a);
            Posix.close(b);
        }
    }

    @Test
    void timesOutWithNothingReady() {
        int a = Posix.eventfd();
        try (FdPoller poller = new FdPoller(a)) {
            long start = System.nanoTime();
            assertEquals(0, poller.await(Duration.ofMillis(200)));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 190 && ms < 5_000, "waited " + ms + " ms for a 200 ms timeout");
            assertFalse(poller.isReadable(0));
        } finally {
            Posix.close(a);
        }
    }

    @Test
    void wakeupFromAnotherThreadEndsAWaitWithoutLimit() throws Exception {
        int a = Posix.eventfd();
        try (FdPoller poller = new FdPoller(a)) {
            Thread waker = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                poller.wakeup();
            });
            long start = System.nanoTime();
            assertEquals(0, poller.await(null), "a wake-up is not a ready descriptor");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 150 && ms < 10_000, "woke after " + ms + " ms");
            waker.join();
            // consumed: the next wait times out again
            assertEquals(0, poller.await(Duration.ofMillis(50)));
            // a wake-up before the wait makes the next wait return at once
            poller.wakeup();
            start = System.nanoTime();
            assertEquals(0, poller.await(Duration.ofSeconds(30)));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
        } finally {
            Posix.close(a);
        }
    }

    @Test
    void aDescriptorThatIsNotOpenIsReportedAsFailed() {
        int notOpen = 999_999; // far above anything this JVM opens
        try (FdPoller poller = new FdPoller(notOpen)) {
            assertEquals(1, poller.await(Duration.ofSeconds(5)));
            assertTrue(poller.isFailed(0), "POLLNVAL");
            assertFalse(poller.isReadable(0));
        }
    }

    @Test
    void refusesBadArgumentsAndUseAfterClose() {
        assertThrows(IllegalArgumentException.class, FdPoller::new);
        assertThrows(IllegalArgumentException.class, () -> new FdPoller(3, -1));
        int a = Posix.eventfd();
        try {
            FdPoller poller = new FdPoller(a);
            assertThrows(IllegalArgumentException.class, () -> poller.await(Duration.ofMillis(-1)));
            assertThrows(IllegalArgumentException.class, () -> poller.awaitMillis(-2));
            poller.close();
            poller.close();
            assertTrue(poller.isClosed());
            poller.wakeup(); // harmless once closed
            assertEquals("FdPoller is closed",
                    assertThrows(IllegalStateException.class, () -> poller.await(Duration.ZERO)).getMessage());
        } finally {
            Posix.close(a);
        }
    }
}
