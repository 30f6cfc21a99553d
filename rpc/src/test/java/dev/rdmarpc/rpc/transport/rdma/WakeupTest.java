package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.loop.SocketPoller;
import dev.rdmarpc.posix.Posix;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Wakeup} on the host: eventfds stand in for completion channels (poll sees a readable
 * descriptor either way), so no RDMA device is needed.
 */
class WakeupTest {

    @Test
    void aWakeFromAnotherThreadEndsAwait() throws Exception {
        try (Wakeup wakeup = new Wakeup(new SocketPoller())) {
            int channel = Posix.eventfd();
            try {
                boolean[] ready = new boolean[1];
                CompletableFuture<Long> slept = CompletableFuture.supplyAsync(() -> {
                    long start = System.nanoTime();
                    wakeup.await(new int[] {channel}, 1, 10_000, ready);
                    return System.nanoTime() - start;
                });
                Thread.sleep(100);
                assertFalse(slept.isDone(), "await returned before the wake");
                wakeup.wake();
                long nanos = slept.get(5, TimeUnit.SECONDS);
                assertTrue(nanos < TimeUnit.SECONDS.toNanos(5), "slept " + nanos + " ns");
                assertArrayEquals(new boolean[] {false}, ready, "the channel was not readable");

                long start = System.nanoTime();
                wakeup.await(new int[] {channel}, 1, 50, ready);
                assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(45),
                        "the wake was consumed: the next await sleeps its timeout");
            } finally {
                Posix.close(channel);
            }
        }
    }

    @Test
    void aReadableChannelIsReportedAtItsIndex() {
        try (Wakeup wakeup = new Wakeup(new SocketPoller()); Arena arena = Arena.ofConfined()) {
            int quiet = Posix.eventfd();
            int busy = Posix.eventfd();
            try {
                MemorySegment scratch = arena.allocate(8, 8);
                Posix.signal(busy, scratch);
                boolean[] ready = new boolean[2];
                wakeup.await(new int[] {quiet, busy}, 2, 5_000, ready);
                assertArrayEquals(new boolean[] {false, true}, ready);
            } finally {
                Posix.close(quiet);
                Posix.close(busy);
            }
        }
    }

    @Test
    void aWakeBeforeAwaitMakesItReturnAtOnceAndCloseIsOnce() {
        Wakeup wakeup = new Wakeup(new SocketPoller());
        wakeup.wake();
        long start = System.nanoTime();
        wakeup.await(new int[0], 0, 10_000, new boolean[0]);
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        wakeup.close();
        wakeup.close();
        wakeup.wake(); // after close: nothing, no write to a reused descriptor number
    }

    @Test
    void moreChannelsThanAPollSetHoldsAreRefused() {
        try (Wakeup wakeup = new Wakeup(new SocketPoller())) {
            assertThrows(IllegalArgumentException.class, () -> wakeup.await(new int[16], 16, 0, new boolean[16]));
        }
    }

    @Test
    void socketsBesideTheChannelsAreDispatchedByAwaitAndByBusyPollsOnceTheIntervalPassed() throws Exception {
        SocketPoller sockets = new SocketPoller();
        int[] fds = new int[40];
        int[] calls = new int[fds.length];
        try (Wakeup wakeup = new Wakeup(sockets, java.util.concurrent.TimeUnit.SECONDS.toNanos(2));
             Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(8, 8);
            for (int i = 0; i < fds.length; i++) {
                int at = i;
                fds[i] = Posix.eventfd();
                sockets.register(fds[i], Posix.POLLIN, (k, revents) -> {
                    calls[at]++;
                    Posix.drain(fds[at], scratch);
                });
            }
            Posix.signal(fds[39], scratch);
            wakeup.await(new int[0], 0, 5_000, new boolean[0]);
            assertEquals(1, calls[39], "more sockets than the first poll set held: it grew");

            Posix.signal(fds[7], scratch);
            assertEquals(0, wakeup.pollSocketsNow(), "polled by the await just now: not again within the interval");
            assertEquals(0, calls[7]);
            Thread.sleep(2_100);
            assertEquals(1, wakeup.pollSocketsNow(), "the interval passed");
            assertEquals(1, calls[7]);
            assertEquals(2, java.util.Arrays.stream(calls).sum(), "no other socket was called");
        } finally {
            for (int fd : fds) {
                Posix.close(fd);
            }
        }
    }
}
