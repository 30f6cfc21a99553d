package dev.rdmarpc.posix;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Sockets} over loopback on this host's kernel: every descriptor is polled as a transport would. */
class SocketsTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private Arena arena;
    private MemorySegment fds;
    private MemorySegment buf;
    private final List<Integer> open = new ArrayList<>();

    @BeforeEach
    void setUp() {
        arena = Arena.ofConfined();
        fds = arena.allocate(Posix.POLLFD_BYTES, 8);
        buf = arena.allocate(1 << 20);
    }

    @AfterEach
    void tearDown() {
        for (int fd : open) {
            Posix.close(fd);
        }
        arena.close();
    }

    private int own(int fd) {
        open.add(fd);
        return fd;
    }

    private void forget(int fd) {
        open.remove(Integer.valueOf(fd));
    }

    /** Polls {@code fd} for {@code events} up to 5 s: its revents. */
    private int await(int fd, int events) {
        Posix.pollfd(fds, 0, fd, events);
        assertEquals(1, Posix.poll(fds, 1, 5000), "fd " + fd + " ready for " + events + " within 5 s");
        return Posix.revents(fds, 0);
    }

    /** A connected pair over loopback: {client, server}. */
    private int[] pair() {
        int listener = own(Sockets.listen(LOOPBACK, 8));
        int client = own(Sockets.connect(Sockets.localAddress(listener)));
        await(client, Sockets.POLLOUT);
        assertTrue(Sockets.finishConnect(client));
        assertTrue((await(listener, Posix.POLLIN) & Posix.POLLIN) != 0);
        int server = own(Sockets.accept(listener));
        return new int[] {client, server};
    }

    @Test
    void acceptConnectAndAddresses() {
        int listener = own(Sockets.listen(LOOPBACK, 8));
        InetSocketAddress bound = Sockets.localAddress(listener);
        assertEquals(InetAddress.getLoopbackAddress(), bound.getAddress());
        assertTrue(bound.getPort() > 0, "port 0 picks one: " + bound);
        assertTrue(Posix.isNonBlocking(listener));
        assertEquals(-1, Sockets.accept(listener), "nothing waits: EAGAIN, not a block");

        int client = own(Sockets.connect(bound));
        assertTrue(Posix.isNonBlocking(client));
        assertTrue((await(client, Sockets.POLLOUT) & Sockets.POLLOUT) != 0);
        assertTrue(Sockets.finishConnect(client));
        await(listener, Posix.POLLIN);
        int server = own(Sockets.accept(listener));
        assertTrue(server >= 0);
        assertTrue(Posix.isNonBlocking(server), "accept4 makes it non-blocking");
        assertEquals(-1, Sockets.accept(listener), "only one was waiting");

        assertEquals(bound, Sockets.remoteAddress(client));
        assertEquals(Sockets.localAddress(client), Sockets.remoteAddress(server));
        assertEquals(bound, Sockets.localAddress(server));
    }

    @Test
    void talksToJavaNetSocketsBothWays() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            int client = own(Sockets.connect((InetSocketAddress) ss.getLocalSocketAddress()));
            try (Socket accepted = ss.accept()) {
                await(client, Sockets.POLLOUT);
                assertTrue(Sockets.finishConnect(client));
                assertEquals(accepted.getRemoteSocketAddress(), Sockets.localAddress(client), "port in network byte order");
                buf.set(JAVA_BYTE, 0, (byte) 42);
                assertEquals(1, Sockets.send(client, buf, 0, 1));
                assertEquals(42, accepted.getInputStream().read());
            }
        }
        int listener = own(Sockets.listen(LOOPBACK, 8));
        try (Socket s = new Socket()) {
            s.connect(Sockets.localAddress(listener), 5000);
            await(listener, Posix.POLLIN);
            int server = own(Sockets.accept(listener));
            assertEquals(s.getLocalSocketAddress(), Sockets.remoteAddress(server));
            s.getOutputStream().write(new byte[] {7, 8});
            await(server, Posix.POLLIN);
            assertEquals(2, Sockets.receive(server, buf, 10, 16));
            assertEquals(7, buf.get(JAVA_BYTE, 10));
            assertEquals(8, buf.get(JAVA_BYTE, 11));
        }
    }

    @Test
    void ipv6Loopback() {
        InetSocketAddress any6 = new InetSocketAddress("::1", 0);
        int listener = own(Sockets.listen(any6, 8));
        InetSocketAddress bound = Sockets.localAddress(listener);
        assertEquals(any6.getAddress(), bound.getAddress());
        int client = own(Sockets.connect(bound));
        await(client, Sockets.POLLOUT);
        assertTrue(Sockets.finishConnect(client));
        await(listener, Posix.POLLIN);
        int server = own(Sockets.accept(listener));
        assertEquals(Sockets.localAddress(client), Sockets.remoteAddress(server));
    }

    @Test
    void receiveReturnsZeroWhenNothingIsThereAndReadsPartially() {
        int[] p = pair();
        assertEquals(0, Sockets.receive(p[1], buf, 0, 100), "nothing sent yet: EAGAIN is 0");
        for (int i = 0; i < 10; i++) {
            buf.set(JAVA_BYTE, i, (byte) i);
        }
        assertEquals(10, Sockets.send(p[0], buf, 0, 10));
        await(p[1], Posix.POLLIN);
        MemorySegment in = arena.allocate(16);
        assertEquals(4, Sockets.receive(p[1], in, 0, 4));
        assertEquals(4, Sockets.receive(p[1], in, 4, 4));
        assertEquals(2, Sockets.receive(p[1], in, 8, 8), "only 2 left");
        assertEquals(0, Sockets.receive(p[1], in, 10, 6), "drained");
        assertArrayEquals(buf.asSlice(0, 10).toArray(JAVA_BYTE), in.asSlice(0, 10).toArray(JAVA_BYTE));
    }

    @Test
    void aFullSendBufferTakesPartOfAWriteThenNothingUntilThePeerReads() {
        int[] p = pair();
        for (int i = 0; i < buf.byteSize(); i++) {
            buf.set(JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        long sent = 0;
        boolean partial = false;
        long n;
        while ((n = Sockets.send(p[0], buf, sent % buf.byteSize(), buf.byteSize() - sent % buf.byteSize())) > 0) {
            partial |= n < buf.byteSize() - sent % buf.byteSize();
            sent += n;
            assertTrue(sent < 256L << 20, "loopback buffers are far smaller than 256 MiB");
        }
        assertEquals(0, n, "full: EAGAIN is 0");
        assertTrue(partial, "the write that filled the buffer took only part of what it was given");
        Posix.pollfd(fds, 0, p[0], Sockets.POLLOUT);
        assertEquals(0, Posix.poll(fds, 1, 0), "not writable while full");

        MemorySegment in = arena.allocate(64 * 1024);
        long received = 0;
        while (received < sent) {
            await(p[1], Posix.POLLIN);
            long r = Sockets.receive(p[1], in, 0, Math.min(in.byteSize(), sent - received));
            assertTrue(r > 0);
            for (long i = 0; i < r; i++) {
                assertEquals(buf.get(JAVA_BYTE, (received + i) % buf.byteSize()), in.get(JAVA_BYTE, i), "byte " + (received + i));
            }
            received += r;
        }
        assertEquals(sent, received);
        assertTrue((await(p[0], Sockets.POLLOUT) & Sockets.POLLOUT) != 0, "writable again once read");
        assertTrue(Sockets.send(p[0], buf, 0, 100) > 0);
    }

    @Test
    void aPeerThatClosesIsTheEndOfTheStreamAndWritingToItFails() {
        int[] p = pair();
        buf.set(JAVA_BYTE, 0, (byte) 5);
        assertEquals(1, Sockets.send(p[1], buf, 0, 1));
        assertEquals(0, Posix.close(p[1]));
        forget(p[1]);
        await(p[0], Posix.POLLIN);
        assertEquals(1, Sockets.receive(p[0], buf, 8, 8), "what was sent before the close is read first");
        assertEquals(5, buf.get(JAVA_BYTE, 8));
        assertEquals(-1, Sockets.receive(p[0], buf, 0, 8), "then the end of the stream");
        assertEquals(-1, Sockets.receive(p[0], buf, 0, 8), "and again");

        // the first write after the close is taken (the peer answers it with RST), a later one fails
        PosixException e = assertThrows(PosixException.class, () -> {
            for (int i = 0; i < 100; i++) {
                Sockets.send(p[0], buf, 0, 8);
                Thread.sleep(10);
            }
        });
        assertTrue(e.errno() == Sockets.EPIPE || e.errno() == Sockets.ECONNRESET, e.getMessage());
        assertEquals("send", e.operation());
    }

    @Test
    void shutdownOutputEndsThePeersStreamButNotTheOtherWay() {
        int[] p = pair();
        Sockets.shutdownOutput(p[0]);
        await(p[1], Posix.POLLIN);
        assertEquals(-1, Sockets.receive(p[1], buf, 0, 8));
        buf.set(JAVA_BYTE, 0, (byte) 9);
        assertEquals(1, Sockets.send(p[1], buf, 0, 1));
        await(p[0], Posix.POLLIN);
        assertEquals(1, Sockets.receive(p[0], buf, 4, 4));
        assertEquals(9, buf.get(JAVA_BYTE, 4));
    }

    @Test
    void aConnectToAClosedPortFailsWithEconnrefused() {
        int listener = Sockets.listen(LOOPBACK, 8);
        InetSocketAddress gone = Sockets.localAddress(listener);
        Posix.close(listener);
        PosixException e = assertThrows(PosixException.class, () -> {
            int fd = own(Sockets.connect(gone)); // loopback may refuse at once, or report it after POLLOUT
            await(fd, Sockets.POLLOUT);
            Sockets.finishConnect(fd);
        });
        assertEquals(Sockets.ECONNREFUSED, e.errno(), e.getMessage());
    }

    @Test
    void aConnectStillGoingOnIsNotFinished() {
        int listener = own(Sockets.listen(LOOPBACK, 8));
        int client = own(Sockets.connect(Sockets.localAddress(listener)));
        // over loopback the handshake completes within the connect call or a moment after; either
        // way finishConnect answers without blocking, and true once POLLOUT came
        boolean early = Sockets.finishConnect(client);
        await(client, Sockets.POLLOUT);
        assertTrue(Sockets.finishConnect(client), "connected once writable (early: " + early + ")");
    }

    @Test
    void noDelayAndKeepAliveReachTheKernel() {
        int[] p = pair();
        assertFalse(Sockets.noDelay(p[0]));
        Sockets.setNoDelay(p[0], true);
        assertTrue(Sockets.noDelay(p[0]));
        Sockets.setKeepAlive(p[0], 10, 5, 3);
        assertArrayEquals(new int[] {1, 10, 5, 3}, Sockets.keepAlive(p[0]));
        int[] before = Sockets.keepAlive(p[1]);
        Sockets.setKeepAlive(p[1], 0, 0, 0);
        int[] after = Sockets.keepAlive(p[1]);
        assertEquals(1, after[0]);
        assertArrayEquals(new int[] {before[1], before[2], before[3]}, new int[] {after[1], after[2], after[3]},
                "0 leaves the system's timers");
        PosixException e = assertThrows(PosixException.class, () -> Sockets.setKeepAlive(p[1], 1 << 20, 0, 0));
        assertEquals(Posix.EINVAL, e.errno());
    }

    @Test
    void anUnresolvedAddressIsRefusedBeforeAnySocketIsMade() {
        assertThrows(IllegalArgumentException.class,
                () -> Sockets.connect(InetSocketAddress.createUnresolved("localhost", 1)));
    }

    @Test
    void aClosedDescriptorFailsWithEbadf() {
        int[] p = pair();
        Posix.close(p[0]);
        forget(p[0]);
        assertEquals(Posix.EBADF, assertThrows(PosixException.class, () -> Sockets.receive(p[0], buf, 0, 8)).errno());
        assertEquals(Posix.EBADF, assertThrows(PosixException.class, () -> Sockets.send(p[0], buf, 0, 8)).errno());
    }
}
