package dev.rdmarpc.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** {@link Epoll} over eventfds: readiness with the caller's data, interest changes, removal, errors. */
class EpollTest {

    @Test
    void aReadyDescriptorComesBackWithItsDataAndPollsBits() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment events = Epoll.events(arena, 4);
            MemorySegment scratch = Epoll.events(arena, 1);
            MemorySegment eight = arena.allocate(8, 8);
            int ep = Epoll.create();
            int a = Posix.eventfd();
            int b = Posix.eventfd();
            try {
                Epoll.add(ep, a, Epoll.IN, 0x1234_5678_9abcL, scratch);
                Epoll.add(ep, b, Epoll.IN, 7, scratch);
                assertEquals(0, Epoll.await(ep, events, 4, 0), "nothing ready");
                Posix.signal(b, eight);
                assertEquals(1, Epoll.await(ep, events, 4, 1000));
                assertEquals(7, Epoll.data(events, 0));
                assertEquals(Posix.POLLIN, Epoll.mask(events, 0), "epoll's bits are poll's");
                assertEquals(Epoll.IN, Posix.POLLIN);

                Epoll.modify(ep, b, Epoll.OUT, 8, scratch); // an eventfd is writable
                assertEquals(1, Epoll.await(ep, events, 4, 1000));
                assertEquals(8, Epoll.data(events, 0));
                assertEquals(Epoll.OUT, Epoll.mask(events, 0));

                Epoll.remove(ep, b, scratch);
                Posix.signal(a, eight);
                assertEquals(1, Epoll.await(ep, events, 4, 1000));
                assertEquals(0x1234_5678_9abcL, Epoll.data(events, 0), "the whole 64 bits, from an unaligned field");

                PosixException e = assertThrows(PosixException.class, () -> Epoll.remove(ep, b, scratch));
                assertEquals("epoll_ctl(DEL)", e.operation());
                assertTrue(e.errno() > 0);
            } finally {
                Posix.close(a);
                Posix.close(b);
                Posix.close(ep);
            }
        }
    }
}
