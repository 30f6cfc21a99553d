package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.posix.Posix;
import dev.rdmarpc.posix.Sockets;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SocketPoller} and {@link PolledSocket} over loopback, polled on the test's thread the way a
 * loop thread polls them: after a descriptor of its own (an eventfd here, as an RDMA loop's).
 */
class SocketPollerTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment fds = arena.allocate(Posix.POLLFD_BYTES * 16, 8);
    private final SocketPoller poller = new SocketPoller();
    private final List<PolledSocket> sockets = new ArrayList<>();
    private int eventfd;
    private int listener = -1;

    @BeforeEach
    void open() {
        eventfd = Posix.eventfd();
    }

    @AfterEach
    void close() {
        for (PolledSocket s : sockets) {
            s.close();
        }
        if (listener >= 0) {
            Posix.close(listener);
        }
        Posix.close(eventfd);
        poller.close();
        arena.close();
    }

    /** One round: the eventfd at index 0, the sockets' epoll descriptor after it; handlers called. @return handlers called */
    private int round(int timeoutMillis) {
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        Posix.pollfd(fds, 1, poller.fd(), Posix.POLLIN);
        if (Posix.poll(fds, 2, timeoutMillis) == 0) {
            return 0;
        }
        return poller.dispatch();
    }

    private void roundsUntil(java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not done within 10 s");
            round(100);
        }
    }

    private PolledSocket own(PolledSocket s) {
        sockets.add(s);
        return s;
    }

    /** A server that echoes what each connection sends, through partial writes, and closes at its end of stream. */
    private final class Echo implements SocketPoller.Handler {
        final PolledSocket socket;
        final ByteBuffer pending = ByteBuffer.allocateDirect(5000);
        long echoed;
        boolean ended;

        Echo(PolledSocket socket) {
            this.socket = socket;
            pending.limit(0);
        }

        @Override
        public void ready(SocketPoller.Key key, int revents) {
            try {
                if (pending.hasRemaining()) {
                    echoed += socket.write(pending);
                }
                while (!pending.hasRemaining()) {
                    pending.clear();
                    int n = socket.read(pending);
                    pending.flip();
                    if (n < 0) {
                        ended = true;
                        poller.cancel(key);
                        socket.close();
                        return;
                    }
                    if (n == 0) {
                        break;
                    }
                    echoed += socket.write(pending);
                }
                // a full send buffer: wait to write, and read nothing meanwhile
                key.interest(pending.hasRemaining() ? Sockets.POLLOUT : Posix.POLLIN);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    private final List<Echo> echoes = new ArrayList<>();

    private InetSocketAddress startEchoServer() {
        listener = Sockets.listen(LOOPBACK, 8);
        poller.register(listener, Posix.POLLIN, (key, revents) -> {
            int fd;
            while ((fd = Sockets.accept(listener)) >= 0) {
                try {
                    Echo e = new Echo(own(PolledSocket.accepted(fd)));
                    echoes.add(e);
                    poller.register(fd, Posix.POLLIN, e);
                } catch (IOException ex) {
                    throw new AssertionError(ex);
                }
            }
        });
        return Sockets.localAddress(listener);
    }

    @Test
    void megabytesEchoThroughPartialWritesAndEndWithTheStream() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket client = own(PolledSocket.connect(address));
        assertEquals(address, client.remoteAddress());
        int total = 8 << 20; // far more than loopback's socket buffers: both sides see EAGAIN and partial writes
        ByteBuffer out = ByteBuffer.allocateDirect(total);
        for (int i = 0; i < total; i++) {
            out.put(i, (byte) (i * 131 + i / 7));
        }
        ByteBuffer in = ByteBuffer.allocateDirect(total + 1); // room to read the end of the stream
        int[] partialWrites = {0};
        boolean[] endRead = {false};
        SocketPoller.Key key = poller.register(client.fd(), Sockets.POLLOUT, (k, revents) -> {
            try {
                if (!client.finishConnect()) {
                    return;
                }
                if (out.hasRemaining()) {
                    int want = out.remaining();
                    int n = client.write(out);
                    if (n < want) {
                        partialWrites[0]++;
                    }
                    if (!out.hasRemaining()) {
                        client.shutdownOutput();
                    }
                }
                if ((revents & (Posix.POLLIN | Posix.POLLHUP)) != 0) {
                    int n;
                    while ((n = client.read(in)) > 0) {
                        // keep reading
                    }
                    endRead[0] |= n < 0;
                }
                k.interest(out.hasRemaining() ? Sockets.POLLOUT | Posix.POLLIN : Posix.POLLIN);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        roundsUntil(() -> endRead[0]);
        poller.cancel(key);
        assertTrue(client.isConnected());
        assertEquals(total, in.position(), "every byte came back");
        for (int i = 0; i < total; i++) {
            if (in.get(i) != out.get(i)) {
                throw new AssertionError("byte " + i + " differs");
            }
        }
        assertTrue(partialWrites[0] > 0, "the client's send buffer filled at least once");
        assertEquals(1, echoes.size());
        assertTrue(echoes.get(0).ended, "the server read the end of the stream and closed");
        assertEquals(total, echoes.get(0).echoed);
        assertEquals(1, poller.size(), "only the listener is left");
        assertEquals(-1, client.read(ByteBuffer.allocateDirect(8)), "the end stays");
    }

    @Test
    void aQuietSocketIsNotReportedAndItsOwnDescriptorWakesTheRound() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket client = own(PolledSocket.connect(address));
        List<Integer> seen = new ArrayList<>();
        poller.register(client.fd(), Posix.POLLIN, (k, revents) -> seen.add(revents));
        roundsUntil(() -> echoes.size() == 1);
        assertEquals(0, round(50), "nothing to read: no handler runs");
        assertEquals(List.of(), seen);
        assertEquals(0, client.read(ByteBuffer.allocateDirect(8)), "EAGAIN reads as 0");

        MemorySegment eight = arena.allocate(8, 8);
        Posix.signal(eventfd, eight);
        Posix.pollfd(fds, 0, eventfd, Posix.POLLIN);
        Posix.pollfd(fds, 1, poller.fd(), Posix.POLLIN);
        assertEquals(1, Posix.poll(fds, 2, 1000), "the loop's own descriptor ends the wait");
        assertEquals(Posix.POLLIN, Posix.revents(fds, 0));
        assertEquals(0, Posix.revents(fds, 1), "no socket is ready");
        assertEquals(0, poller.dispatch());
        assertEquals(1, Posix.drain(eventfd, eight));
    }

    @Test
    void aPeerThatClosesIsReadAsTheEndOfTheStream() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket client = own(PolledSocket.connect(address));
        roundsUntil(() -> echoes.size() == 1);
        PolledSocket server = echoes.get(0).socket;
        poller.cancel(poller.keys().get(1));
        ByteBuffer b = ByteBuffer.allocateDirect(4);
        b.put(0, (byte) 1).put(1, (byte) 2);
        b.limit(2);
        assertEquals(2, server.write(b));
        server.close();
        assertFalse(server.isOpen());
        server.close(); // once only: the descriptor number may be another's by now
        assertThrows(ClosedChannelException.class, () -> server.read(ByteBuffer.allocateDirect(1)));

        int[] revents = {0};
        poller.register(client.fd(), Posix.POLLIN, (k, r) -> revents[0] |= r);
        roundsUntil(() -> revents[0] != 0);
        ByteBuffer in = ByteBuffer.allocateDirect(8);
        assertEquals(2, client.read(in), "the bytes before the close first");
        assertEquals(-1, client.read(in));
    }

    @Test
    void aCancelDuringADispatchStopsTheOtherHandler() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket a = own(PolledSocket.connect(address));
        PolledSocket b = own(PolledSocket.connect(address));
        roundsUntil(() -> echoes.size() == 2);
        int[] calls = {0};
        SocketPoller.Key[] keys = new SocketPoller.Key[2];
        SocketPoller.Handler cancelOther = (k, r) -> {
            calls[0]++;
            poller.cancel(keys[k == keys[0] ? 1 : 0]);
        };
        keys[0] = poller.register(a.fd(), Sockets.POLLOUT, cancelOther);
        keys[1] = poller.register(b.fd(), Sockets.POLLOUT, cancelOther);
        assertEquals(1, round(1000), "both were writable, the first to run cancelled the second");
        assertEquals(1, calls[0]);
        assertTrue(keys[0].isCancelled() != keys[1].isCancelled());
    }

    @Test
    void aRefusedConnectIsAConnectException() throws Exception {
        int fd = Sockets.listen(LOOPBACK, 1);
        InetSocketAddress gone = Sockets.localAddress(fd);
        Posix.close(fd);
        ConnectException e = assertThrows(ConnectException.class, () -> {
            PolledSocket s = own(PolledSocket.connect(gone));
            boolean[] done = {false};
            poller.register(s.fd(), Sockets.POLLOUT, (k, r) -> done[0] = true);
            roundsUntil(() -> done[0]);
            s.finishConnect();
        });
        assertTrue(e.getMessage().contains("refused"), e.getMessage());
    }

    @Test
    void heapBuffersAreRefused() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket client = own(PolledSocket.connect(address));
        assertThrows(IllegalArgumentException.class, () -> client.read(ByteBuffer.allocate(8)));
        client.configure(true, 10, 5, 3);
        assertEquals(LOOPBACK.getAddress(), client.localAddress().getAddress());
    }

    @Test
    void aHungUpSocketThatWaitsForNothingDoesNotEndTheWait() throws Exception {
        InetSocketAddress address = startEchoServer();
        PolledSocket client = own(PolledSocket.connect(address));
        roundsUntil(() -> echoes.size() == 1);
        int[] calls = {0};
        SocketPoller.Key key = poller.register(client.fd(), Posix.POLLIN, (k, r) -> calls[0]++);
        poller.cancel(poller.keys().get(1)); // the server's side of the connection: closed without its poller
        echoes.get(0).socket.close();
        roundsUntil(() -> calls[0] > 0);
        key.interest(0); // a reader that stopped reading: its hang-up must not spin the thread
        long start = System.nanoTime();
        assertEquals(0, round(200));
        assertTrue(System.nanoTime() - start >= 150_000_000L, "the wait ran its time: the socket is out of the set");
        key.interest(Posix.POLLIN);
        assertEquals(1, round(1000), "back in the set, its end of stream is reported again");
        assertEquals(-1, client.read(ByteBuffer.allocateDirect(8)));
    }

    @Test
    void aWaitCostsOneDescriptorWhateverTheSocketsAndACancelAfterACloseIsHarmless() throws Exception {
        int[] fds = new int[300];
        int[] calls = new int[fds.length];
        SocketPoller.Key[] keys = new SocketPoller.Key[fds.length];
        MemorySegment eight = arena.allocate(8, 8);
        try {
            for (int i = 0; i < fds.length; i++) {
                int at = i;
                fds[i] = Posix.eventfd();
                keys[i] = poller.register(fds[i], Posix.POLLIN, (k, r) -> {
                    calls[at]++;
                    Posix.drain(fds[at], eight);
                });
            }
            Posix.signal(fds[257], eight);
            assertEquals(1, round(1000));
            assertEquals(1, calls[257]);
            assertEquals(1, java.util.Arrays.stream(calls).sum());
            Posix.close(fds[3]);
            poller.cancel(keys[3]); // closed first: the kernel dropped it already
            assertTrue(keys[3].isCancelled());
            assertEquals(299, poller.size());
        } finally {
            for (int i = 0; i < fds.length; i++) {
                if (i != 3) {
                    Posix.close(fds[i]);
                }
            }
        }
    }
}
