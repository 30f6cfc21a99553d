package dev.rdmarpc.rpc.transport;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.io.EOFException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@link Transport} must do, asked through the SPI alone. Subclass it per transport (TCP
 * here; RDMA later) so both answer the same questions.
 */
@Timeout(30)
public abstract class TransportContractTest {
    protected Transport transport;
    private ServerEndpoint endpoint;
    final BlockingQueue<Object> serverEvents = new ArrayBlockingQueue<>(10_000);
    private final BlockingQueue<Object> clientEvents = new ArrayBlockingQueue<>(10_000);
    private final CompletableFuture<Connection> accepted = new CompletableFuture<>();

    /** @return a fresh transport for one test */
    protected abstract Transport createTransport();

    /** @return the address to listen on */
    protected abstract InetSocketAddress listenAddress();

    /** A received frame, copied. */
    record Frame(long requestId, int methodId, int type, byte[] payload, byte[] attachment, boolean onLoop) {
    }

    record Closed(Throwable cause) {
    }

    static FrameHandler recorder(BlockingQueue<Object> events, boolean echo) {
        return new FrameHandler() {
            @Override
            public void onFrame(Connection c, MemorySegment buf, long off, int len) {
                int plen = FrameHeader.payloadLength(buf, off);
                int alen = FrameHeader.attachmentLength(buf, off);
                byte[] p = buf.asSlice(off + FrameDescriptor.HEADER_LENGTH, plen).toArray(ValueLayout.JAVA_BYTE);
                byte[] a = buf.asSlice(off + FrameDescriptor.HEADER_LENGTH + plen, alen).toArray(ValueLayout.JAVA_BYTE);
                events.add(new Frame(FrameHeader.requestId(buf, off), FrameHeader.methodId(buf, off),
                        FrameHeader.type(buf, off), p, a, c.inEventLoop()));
                if (echo) {
                    long at = c.claim(len);
                    assertTrue(at >= 0);
                    MemorySegment.copy(buf, off, c.claimBuffer(), at, len);
                    c.claimBuffer().set(ValueLayout.JAVA_BYTE, at + FrameDescriptor.TYPE_OFFSET, (byte) FrameDescriptor.TYPE_RESPONSE);
                    c.commit();
                }
            }

            @Override
            public void onTick(Connection c, long now) {
            }

            @Override
            public void onClose(Connection c, Throwable cause) {
                events.add(new Closed(cause));
            }
        };
    }

    @BeforeEach
    void open() throws Exception {
        transport = createTransport();
        endpoint = transport.listen(listenAddress(), 1 << 20, c -> {
            accepted.complete(c);
            return recorder(serverEvents, true);
        });
    }

    @AfterEach
    void close() {
        transport.close();
    }

    Connection connect() throws Exception {
        return transport.connect(endpoint.address(), 1 << 20, recorder(clientEvents, false), Duration.ofSeconds(5));
    }

    static void send(Connection c, long id, byte[] payload, byte[] attachment) {
        int len = FrameDescriptor.HEADER_LENGTH + payload.length + attachment.length;
        long at = c.claim(len);
        assertTrue(at >= 0, "claim failed: " + at);
        MemorySegment buf = c.claimBuffer();
        new FrameHeaderEncoder().wrap(buf, at).type(FrameDescriptor.TYPE_REQUEST).requestId(id).methodId(7)
                .payloadLength(payload.length).attachmentLength(attachment.length);
        MemorySegment.copy(payload, 0, buf, ValueLayout.JAVA_BYTE, at + FrameDescriptor.HEADER_LENGTH, payload.length);
        MemorySegment.copy(attachment, 0, buf, ValueLayout.JAVA_BYTE, at + FrameDescriptor.HEADER_LENGTH + payload.length,
                attachment.length);
        c.commit();
    }

    static <T> T next(BlockingQueue<Object> q, Class<T> type) throws InterruptedException {
        Object o = q.poll(10, TimeUnit.SECONDS);
        assertNotNull(o, "no event within 10 s");
        assertInstanceOf(type, o);
        return type.cast(o);
    }

    @Test
    void framesBothWaysInOrderOnTheIoThread() throws Exception {
        Connection c = connect();
        assertTrue(c.isOpen());
        assertFalse(c.inEventLoop());
        assertEquals(endpoint.address().getPort(), c.remoteAddress().getPort());
        for (int i = 0; i < 500; i++) {
            send(c, i, ("p" + i).getBytes(), i % 3 == 0 ? new byte[]{(byte) i} : new byte[0]);
        }
        for (int i = 0; i < 500; i++) {
            Frame f = next(serverEvents, Frame.class);
            assertEquals(i, f.requestId());
            assertEquals("p" + i, new String(f.payload()));
            assertTrue(f.onLoop());
            Frame back = next(clientEvents, Frame.class);
            assertEquals(i, back.requestId());
            assertEquals(FrameDescriptor.TYPE_RESPONSE, back.type());
            assertArrayEquals(f.attachment(), back.attachment());
        }
    }

    @Test
    void framesLargerThanAChunk() throws Exception {
        Connection c = connect();
        int chunk = transport.bufferPool().chunkSize();
        for (int size : new int[]{chunk - FrameDescriptor.HEADER_LENGTH, chunk, 3 * chunk + 5, 700_000}) {
            byte[] p = new byte[size];
            for (int i = 0; i < size; i++) {
                p[i] = (byte) (i * 7 + size);
            }
            send(c, size, p, new byte[0]);
            Frame back = next(clientEvents, Frame.class);
            assertEquals(size, back.requestId());
            assertArrayEquals(p, back.payload());
        }
        TestWait.until(() -> transport.bufferPool().largeBuffersInUse() == 0);
    }

    @Test
    void claimFromManyThreadsKeepsFramesWhole() throws Exception {
        Connection c = connect();
        int threads = 8;
        int perThread = 300;
        CountDownLatch go = new CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int base = t * perThread;
            ts[t] = Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    byte[] p = new byte[(base + i) % 1000];
                    java.util.Arrays.fill(p, (byte) (base + i));
                    send(c, base + i, p, new byte[0]);
                }
            });
        }
        go.countDown();
        boolean[] seen = new boolean[threads * perThread];
        for (int i = 0; i < seen.length; i++) {
            Frame f = next(clientEvents, Frame.class);
            int id = (int) f.requestId();
            assertFalse(seen[id]);
            seen[id] = true;
            assertEquals(id % 1000, f.payload().length);
            for (byte b : f.payload()) {
                assertEquals((byte) id, b);
            }
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    @Test
    void closeIsReportedOnceOnBothSides() throws Exception {
        Connection c = connect();
        send(c, 1, new byte[1], new byte[0]);
        next(serverEvents, Frame.class);
        next(clientEvents, Frame.class);
        c.close(null);
        assertNull(next(clientEvents, Closed.class).cause(), "orderly local close");
        assertInstanceOf(EOFException.class, next(serverEvents, Closed.class).cause(), "peer close seen as EOF");
        assertFalse(c.isOpen());
        assertEquals(Connection.CLOSED, c.claim(64));
        c.close(null);
        assertNull(clientEvents.poll(200, TimeUnit.MILLISECONDS), "closed only once");
    }

    @Test
    void badHeaderClosesWithAProtocolException() throws Exception {
        Connection c = connect();
        long at = c.claim(FrameDescriptor.HEADER_LENGTH);
        new FrameHeaderEncoder().wrap(c.claimBuffer(), at).type(FrameDescriptor.TYPE_REQUEST).requestId(1).methodId(7);
        c.claimBuffer().set(ValueLayout.JAVA_INT, at, 0xBAD);
        c.commit();
        assertInstanceOf(ProtocolException.class, next(serverEvents, Closed.class).cause());
        assertInstanceOf(EOFException.class, next(clientEvents, Closed.class).cause());
    }

    @Test
    void abortSendsNothing() throws Exception {
        Connection c = connect();
        long at = c.claim(100);
        assertTrue(at >= 0);
        c.abort();
        send(c, 5, new byte[3], new byte[0]);
        // Had the aborted 100 bytes gone out, the server would have parsed them first (and closed).
        assertEquals(5, next(serverEvents, Frame.class).requestId());
        assertTrue(accepted.get(5, TimeUnit.SECONDS).isOpen());
        assertNull(serverEvents.poll(100, TimeUnit.MILLISECONDS));
    }

    @Test
    void executeRunsOnTheIoThread() throws Exception {
        Connection c = connect();
        CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
        c.execute(() -> onLoop.complete(c.inEventLoop()));
        assertTrue(onLoop.get(5, TimeUnit.SECONDS));
        assertTrue(c.tickIntervalNanos() > 0);
    }

    /** Tiny polling helper. */
    static final class TestWait {
        static void until(java.util.function.BooleanSupplier cond) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!cond.getAsBoolean()) {
                assertTrue(System.nanoTime() < deadline, "condition not met in 5 s");
                Thread.sleep(2);
            }
        }
    }
}
