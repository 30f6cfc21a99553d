package dev.rdmarpc.posix;

import dev.rdmarpc.posix.raw.posix_h;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The descriptor calls of {@link Posix} on this host's C library. */
class PosixTest {
    private Arena arena;
    private MemorySegment fds;
    private MemorySegment scratch;
    private int eventfd = -1;

    @BeforeEach
    void open() {
        arena = Arena.ofShared();
        fds = arena.allocate(Posix.POLLFD_BYTES * 2, 8);
        scratch = arena.allocate(8, 8);
        eventfd = Posix.eventfd();
    }

    @AfterEach
    void close() {
        if (eventfd >= 0) {
            assertEquals(0, Posix.close(eventfd));
        }
        arena.close();
    }

    @Test
    void anEventfdSignalWakesPollAndDrainResetsIt() {
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        assertEquals(0, Posix.poll(fds, 1, 0), "a new eventfd is not readable");
        assertEquals(0, Posix.drain(eventfd, scratch), "draining an empty eventfd is not an error");

        Posix.signal(eventfd, scratch);
        Posix.signal(eventfd, scratch);
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        assertEquals(1, Posix.poll(fds, 1, 0));
        assertEquals(Posix.POLLIN, Posix.revents(fds, 0));
        assertEquals(2, Posix.drain(eventfd, scratch), "the counter holds both signals");

        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        assertEquals(0, Posix.poll(fds, 1, 0), "drained");
    }

    @Test
    void aSignalFromAnotherThreadEndsABlockedPoll() throws Exception {
        int other = Posix.eventfd();
        try {
            Posix.pollfd(fds, 0, other, Posix.POLLIN); // never signalled
            Posix.pollfd(fds, 1, eventfd, Posix.POLLIN);
            CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
                long start = System.nanoTime();
                int ready = Posix.poll(fds, 2, 10_000);
                assertEquals(1, ready);
                return System.nanoTime() - start;
            });
            Thread.sleep(100);
            assertFalse(waited.isDone(), "poll returned before the signal");
            try (Arena local = Arena.ofConfined()) {
                Posix.signal(eventfd, local.allocate(8, 8));
            }
            long nanos = waited.get(5, TimeUnit.SECONDS);
            assertTrue(nanos < TimeUnit.SECONDS.toNanos(5), "woke after " + nanos + " ns");
            assertEquals(0, Posix.revents(fds, 0));
            assertEquals(Posix.POLLIN, Posix.revents(fds, 1));
        } finally {
            assertEquals(0, Posix.close(other));
        }
    }

    @Test
    void pollTimesOut() {
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        long start = System.nanoTime();
        assertEquals(0, Posix.poll(fds, 1, 50));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(45));
    }

    @Test
    void setNonBlockingSetsTheFlag() {
        // The generated variadic fcntl clears O_NONBLOCK, which eventfd() set.
        posix_h.fcntl setfl = posix_h.fcntl.makeInvoker(posix_h.C_INT);
        assertEquals(0, setfl.apply(eventfd, posix_h.F_SETFL(), 0));
        assertFalse(Posix.isNonBlocking(eventfd));
        Posix.setNonBlocking(eventfd);
        assertTrue(Posix.isNonBlocking(eventfd));
        Posix.setNonBlocking(eventfd); // already set: no change, no error
        assertTrue(Posix.isNonBlocking(eventfd));
    }

    @Test
    void aClosedDescriptorFailsWithEbadfAndItsText() {
        int fd = eventfd;
        eventfd = -1;
        assertEquals(0, Posix.close(fd));
        assertEquals(Posix.EBADF, Posix.close(fd), "closing twice reports EBADF");

        PosixException fcntl = assertThrows(PosixException.class, () -> Posix.setNonBlocking(fd));
        assertEquals(Posix.EBADF, fcntl.errno());
        assertEquals("fcntl(F_GETFL)", fcntl.operation());
        assertEquals("fcntl(F_GETFL) failed: Bad file descriptor (errno " + Posix.EBADF + ")", fcntl.getMessage());

        PosixException write = assertThrows(PosixException.class, () -> Posix.signal(fd, scratch));
        assertEquals(Posix.EBADF, write.errno());
        PosixException read = assertThrows(PosixException.class, () -> Posix.drain(fd, scratch));
        assertEquals(Posix.EBADF, read.errno());
    }

    @Test
    void pollOverMoreDescriptorsThanTheProcessMayOpenFailsWithEinval() {
        // The kernel refuses nfds above RLIMIT_NOFILE before it reads the array.
        PosixException e = assertThrows(PosixException.class, () -> Posix.poll(fds, Integer.MAX_VALUE, 0));
        assertEquals(Posix.EINVAL, e.errno());
        assertEquals("poll", e.operation());
    }

    @Test
    void theWakeUpPathAllocatesNothing() {
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        for (int i = 0; i < 20_000; i++) { // warm up: the JIT compiles the path
            wakeRoundTrip();
        }
        long before = allocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            wakeRoundTrip();
        }
        long bytes = allocatedBytes() - before;
        assertTrue(bytes < 10_000, bytes + " bytes allocated by 10,000 signal-poll-drain round trips");
    }

    /**
     * This thread's allocated bytes, through reflection: the module does not read java.management
     * (production code has no use for it), and the tests are patched into the module.
     */
    private static long allocatedBytes() {
        try {
            Object threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            return (long) Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes")
                    .invoke(threads);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("com.sun.management.ThreadMXBean not available", e);
        }
    }

    private void wakeRoundTrip() {
        Posix.signal(eventfd, scratch);
        if (Posix.poll(fds, 1, 0) != 1) {
            throw new AssertionError("not readable after a signal");
        }
        Posix.drain(eventfd, scratch);
    }

    @Test
    void interfaceNamesAndPageSize() {
        assertNull(Posix.ifIndexToName(0));
        assertNull(Posix.ifIndexToName(-1));
        assertEquals("lo", Posix.ifIndexToName(1), "the loopback interface is index 1");
        assertNull(Posix.ifIndexToName(Integer.MAX_VALUE));
        long page = Posix.pageSize();
        assertTrue(page >= 4096 && Long.bitCount(page) == 1, "page size " + page);
        assertEquals("Bad file descriptor", Posix.strerror(Posix.EBADF));
    }
}
