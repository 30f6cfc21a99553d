package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The order of reads and writes on one I/O thread: when several connections are ready at once, the
 * answers to one connection's requests are written before the next connection is read, as a Netty
 * pipeline flushes on its read-complete. Written only at the end of the iteration, every response
 * waited for every other connection's requests, and the peer's I/O thread for all of them: request
 * and response then travelled in one wave, each side idle while the other worked (docs/performance.md,
 * "Where event mode's round trip went").
 */
@Timeout(30)
class FlushOrderTcpTest {
    private static final int PAYLOAD = 16;
    private static final int FRAME = FrameDescriptor.HEADER_LENGTH + PAYLOAD;

    /** Clients' raw sockets, in connection order; an answered request's response is readable on its own. */
    private final List<SocketChannel> clients = new CopyOnWriteArrayList<>();
    /** Per client socket, the response bytes read from it so far. */
    private final Map<SocketChannel, ByteBuffer> landed = new ConcurrentHashMap<>();

    @Test
    void aConnectionsAnswerIsWrittenBeforeTheNextReadyConnectionIsRead() throws Exception {
        for (IdleStrategy idle : new IdleStrategy[]{IdleStrategy.event(), IdleStrategy.busyPoll()}) {
            clients.clear();
            landed.clear();
            // what each dispatch saw: the number of earlier requests whose response was already on its socket
            BlockingQueue<int[]> seen = new LinkedBlockingQueue<>();
            List<Connection> accepted = new CopyOnWriteArrayList<>();
            try (TcpTransport server = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1).idleStrategy(idle)))) {
                ServerEndpoint endpoint = server.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, c -> {
                    accepted.add(c);
                    return echo(seen);
                });
                int n = 3;
                for (int i = 0; i < n; i++) {
                    SocketChannel ch = SocketChannel.open(endpoint.address());
                    ch.configureBlocking(false);
                    clients.add(ch);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (accepted.size() < n && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertEquals(n, accepted.size(), "connections accepted");
                // Hold the I/O thread while a request arrives on every connection, so that one select finds all.
                CountDownLatch busy = new CountDownLatch(1);
                CountDownLatch resume = new CountDownLatch(1);
                accepted.get(0).execute(() -> {
                    busy.countDown();
                    try {
                        resume.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                assertTrue(busy.await(5, TimeUnit.SECONDS));
                for (int i = 0; i < n; i++) {
                    write(clients.get(i), i);
                }
                Thread.sleep(100); // loopback delivers at once; leave the bytes time to land anyway
                resume.countDown();
                for (int k = 0; k < n; k++) {
                    int[] s = seen.poll(10, TimeUnit.SECONDS);
                    assertTrue(s != null, idle + ": request " + k + " not dispatched");
                    assertEquals(k, s[1], idle + ": dispatch " + k + " (request " + s[0] + ") found " + s[1]
                            + " earlier answers on their sockets; each should have left before the next connection was read");
                }
                for (SocketChannel ch : clients) {
                    ch.close();
                }
            }
        }
    }

    private static void write(SocketChannel ch, int id) throws IOException {
        MemorySegment frame = MemorySegment.ofArray(new byte[FRAME]);
        new FrameHeaderEncoder().wrap(frame, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(id).methodId(7)
                .payloadLength(PAYLOAD).attachmentLength(0);
        ByteBuffer b = frame.asByteBuffer();
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** The other connections whose answer has arrived on their client socket. */
    private int answered(int exceptId) throws IOException {
        int count = 0;
        for (int i = 0; i < clients.size(); i++) {
            if (i != exceptId && readable(clients.get(i))) {
                count++;
            }
        }
        return count;
    }

    /** Whether the whole response has arrived on {@code ch} (read into its buffer in {@link #landed}). */
    private boolean readable(SocketChannel ch) throws IOException {
        ByteBuffer b = landed.computeIfAbsent(ch, k -> ByteBuffer.allocate(FRAME));
        if (b.hasRemaining()) {
            ch.read(b);
        }
        return !b.hasRemaining();
    }

    private FrameHandler echo(BlockingQueue<int[]> seen) {
        return new FrameHandler() {
            @Override
            public void onFrame(Connection c, MemorySegment buf, long off, int len) {
                int id = (int) FrameHeader.requestId(buf, off);
                try {
                    seen.add(new int[]{id, answered(id)});
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                long at = c.claim(len);
                MemorySegment.copy(buf, off, c.claimBuffer(), at, len);
                c.claimBuffer().set(ValueLayout.JAVA_BYTE, at + FrameDescriptor.TYPE_OFFSET, (byte) FrameDescriptor.TYPE_RESPONSE);
                c.commit();
            }

            @Override
            public void onTick(Connection c, long now) {
            }

            @Override
            public void onClose(Connection c, Throwable cause) {
            }
        };
    }
}
