package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What one peer can hold of a server over TCP (issue 15, points 2 and 3): connection limits in all
 * and per address, told to the refused peer; a declared frame length that reserves nothing until
 * its bytes come; idle connections that hold no buffer. Raw sockets on 127.0.0.0/8, each test bounded.
 */
@Timeout(60)
class PeerLimitsTcpTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<byte[], byte[]> BYTES = Method.of("bytes", Codecs.BYTES, Codecs.BYTES);

    private static RpcServer server(UnaryOperator<TcpConfig> tcp) {
        return RpcServer.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> tcp.apply(cfg.loop(l -> l.ioThreads(1))))
                .register(ECHO, (ctx, s) -> s)
                .register(BYTES, (ctx, b) -> b)
                .start();
    }

    /** A raw connection to {@code server} from {@code source} (any 127.x address works on Linux's loopback). */
    private static SocketChannel from(String source, RpcServer server) throws Exception {
        SocketChannel ch = SocketChannel.open();
        ch.bind(new InetSocketAddress(source, 0));
        ch.connect(server.address());
        ch.socket().setSoTimeout(5000);
        return ch;
    }

    /** One echo call on a raw connection: proves the server serves it. */
    private static void echoOn(SocketChannel ch, long id) throws Exception {
        TestSupport.write(ch, TestSupport.requestFrame(id, ECHO.id(), "x".getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[0]));
        ByteBuffer r = TestSupport.readFrame(ch);
        assertNotNull(r, "served");
        assertEquals(id, r.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
        assertEquals(0, r.getShort(FrameDescriptor.STATUS_OFFSET));
    }

    @Test
    void connectionsOverALimitAreToldWhyAndTheOthersAreServed() throws Exception {
        List<SocketChannel> open = new ArrayList<>();
        try (RpcServer server = server(cfg -> cfg.limits(l -> l.maxConnections(3).maxConnectionsPerAddress(2)))) {
            open.add(from("127.0.0.1", server));
            open.add(from("127.0.0.1", server));
            try (SocketChannel third = from("127.0.0.1", server)) {
                String why = TestSupport.lastWord(third, Status.RESOURCE_EXHAUSTED);
                assertTrue(why.contains("connection limit") && why.contains("2 connections open from 127.0.0.1")
                        && why.contains("maxConnectionsPerAddress"), why);
            }
            open.add(from("127.0.0.2", server)); // another address: the third and last of the total
            try (SocketChannel fourth = from("127.0.0.3", server)) {
                String why = TestSupport.lastWord(fourth, Status.RESOURCE_EXHAUSTED);
                assertTrue(why.contains("connection limit") && why.contains("maxConnections"), why);
            }
            for (int i = 0; i < open.size(); i++) {
                echoOn(open.get(i), i + 1); // the admitted ones are served meanwhile
            }
            // A client over the limit: its call fails with the server's reason.
            try (RpcClient over = RpcClient.connect(server.address())) {
                RpcException e = assertThrows(RpcException.class, () -> over.call(ECHO, "over"));
                assertTrue(e.status() == Status.RESOURCE_EXHAUSTED || e.status() == Status.CONNECTION_CLOSED, e::toString);
                assertTrue(e.getMessage().contains("connection limit"), e.getMessage());
            }
            open.remove(0).close();
            TestSupport.await("a place free", Duration.ofSeconds(5), () -> server.metrics().connectionsActive() == 2);
            try (RpcClient c = RpcClient.connect(server.address())) {
                assertEquals("in", c.call(ECHO, "in"));
            }
        } finally {
            for (SocketChannel ch : open) {
                ch.close();
            }
        }
    }

    @Test
    void aHeaderThatDeclaresMegabytesHoldsOneChunkNotTheFrame() throws Exception {
        int peers = 20;
        int declared = 8 << 20;
        // 20 x 8 MiB declared against a 64 MiB budget for large frames: reserved as declared, they would take it all
        BufferPool.Config pool = new BufferPool.Config().maxLargeBytes(64L << 20);
        List<SocketChannel> peersOpen = new ArrayList<>();
        try (RpcServer server = server(cfg -> cfg.bufferPool(pool).idleTimeout(Duration.ZERO))) {
            int chunksBefore = server.bufferPool().chunksInUse();
            byte[] frame = TestSupport.requestFrame(1, BYTES.id(), new byte[0], new byte[0]);
            ByteBuffer.wrap(frame).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .putInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET, declared - FrameDescriptor.HEADER_LENGTH);
            byte[] start = Arrays.copyOf(frame, FrameDescriptor.HEADER_LENGTH + 1000); // the header and a little
            for (int i = 0; i < peers; i++) {
                SocketChannel ch = TestSupport.open(server.address());
                peersOpen.add(ch);
                TestSupport.write(ch, start);
            }
            TestSupport.await("every peer's bytes received", Duration.ofSeconds(10),
                    () -> server.bufferPool().chunksInUse() >= chunksBefore + peers || server.bufferPool().largeBuffersInUse() > 0);
            assertEquals(0, server.bufferPool().largeBuffersInUse(), "nothing reserved for what has not arrived");
            assertEquals(chunksBefore + peers, server.bufferPool().chunksInUse(), "a receive chunk each");
            try (RpcClient good = RpcClient.builder().address(server.address()).maxFrameLength(16 << 20).connect()) {
                byte[] mib = new byte[1 << 20];
                mib[12345] = 7;
                assertArrayEquals(mib, good.call(BYTES, mib), "a good client's 1 MiB call gets through");
            }
        } finally {
            for (SocketChannel ch : peersOpen) {
                ch.close();
            }
        }
    }

    @Test
    void aLargeFramesBufferGrowsWithItsBytesNotWithItsDeclaredLength() throws Exception {
        int payload = (16 << 20) - FrameDescriptor.HEADER_LENGTH; // the largest frame the server takes
        try (RpcServer server = server(cfg -> cfg.idleTimeout(Duration.ZERO));
             SocketChannel ch = TestSupport.open(server.address())) {
            BufferPool pool = server.bufferPool();
            byte[] body = new byte[payload];
            for (int i = 0; i < body.length; i += 4093) {
                body[i] = (byte) (i / 4093);
            }
            byte[] frame = TestSupport.requestFrame(1, BYTES.id(), body, new byte[0]);
            int sent = 70_000; // past a 64 KiB chunk: the frame gets its first buffer
            TestSupport.write(ch, Arrays.copyOf(frame, sent));
            TestSupport.await("the frame's first buffer", Duration.ofSeconds(5), () -> pool.largeBuffersInUse() == 1);
            long first = pool.largeBytesInUse();
            System.out.println("16 MiB declared, " + sent + " bytes sent: " + first + " bytes held");
            assertTrue(first <= 4L * sent, "at most four times what arrived, not 16 MiB: " + first);
            int more = 1_200_000;
            TestSupport.write(ch, Arrays.copyOfRange(frame, sent, more));
            // A move takes the larger buffer first, copies, then gives the full one back: wait for a state
            // between moves (one buffer, past 1 MiB). Read during a move there are two (CI saw it once).
            TestSupport.await("grown once past 1 MiB, the full buffer given back", Duration.ofSeconds(5),
                    () -> pool.largeBuffersInUse() == 1 && pool.largeBytesInUse() > 1 << 20);
            long grown = pool.largeBytesInUse();
            System.out.println(more + " bytes sent: " + grown + " bytes held");
            // FrameReassembler's bound: at most 4.5 times what the peer sent. Once all 1,200,000 bytes
            // are read the frame has moved from its 1 MiB step to its 4 MiB one (5 MiB from the
            // pool): 4.4 times. Read before that last move it is smaller (CI saw both).
            assertTrue(grown <= 9L * more / 2, "at most 4.5 times what arrived: " + grown);
            assertTrue(grown < payload, "not the declared length");
            TestSupport.write(ch, Arrays.copyOfRange(frame, more, frame.length));
            ByteBuffer r = TestSupport.readFrame(ch);
            assertNotNull(r, "answered");
            assertEquals(0, r.getShort(FrameDescriptor.STATUS_OFFSET));
            assertEquals(frame.length, r.limit(), "the whole echo");
            byte[] echoed = new byte[payload];
            r.get(FrameDescriptor.HEADER_LENGTH, echoed);
            assertArrayEquals(body, echoed, "every byte survived the moves to larger buffers");
        }
    }

    @Test
    void anAddressHoldsAtMostItsShareOfLargeFramesTheRestWaitAndAGoodClientGetsThrough() throws Exception {
        int payload = 8 << 20; // the pool gives such a frame a 9 MiB buffer
        BufferPool.Config pool = new BufferPool.Config().maxLargeBytes(128L << 20);
        List<SocketChannel> hogs = new ArrayList<>();
        try (RpcServer server = server(cfg -> cfg.bufferPool(pool).idleTimeout(Duration.ZERO)
                .limits(l -> l.maxFrameBytesPerAddress(20L << 20)))) { // two such frames per address
            byte[] frame = TestSupport.requestFrame(1, BYTES.id(), new byte[payload], new byte[0]);
            byte[] start = Arrays.copyOf(frame, 70_000); // past a chunk: each wants its large buffer
            for (String from : List.of("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")) {
                for (int i = 0; i < 4; i++) {
                    SocketChannel ch = from(from, server);
                    hogs.add(ch);
                    TestSupport.write(ch, start);
                }
            }
            // 16 x 9 MiB would take 144 MiB, more than the 128 MiB budget. Each address gets two (18 MiB
            // of its 20), the others wait holding a chunk: 72 MiB, the rest free for everyone else.
            TestSupport.await("two large frames per address", Duration.ofSeconds(10),
                    () -> server.bufferPool().largeBuffersInUse() >= 8);
            Thread.sleep(300); // a few ticks: the waiting ones stay waiting
            assertEquals(8, server.bufferPool().largeBuffersInUse());
            assertEquals(16, server.metrics().connectionsActive(), "none refused: they wait");
            try (RpcClient good = RpcClient.builder().address(server.address()).maxFrameLength(16 << 20).connect()) {
                byte[] mib = new byte[1 << 20];
                mib[4321] = 3;
                assertArrayEquals(mib, good.call(BYTES, mib), "a good client's 1 MiB call gets through");
            }
            // One address's frames all complete, two at a time: the waiting ones get their turn.
            List<SocketChannel> first = hogs.subList(0, 4);
            List<Thread> senders = new ArrayList<>();
            for (SocketChannel ch : first) {
                Thread t = new Thread(() -> {
                    try {
                        TestSupport.write(ch, Arrays.copyOfRange(frame, start.length, frame.length)); // whole, however it is taken
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                senders.add(t);
                t.start();
            }
            for (SocketChannel ch : first) {
                ByteBuffer r = TestSupport.readFrame(ch);
                assertNotNull(r, "answered");
                assertEquals(0, r.getShort(FrameDescriptor.STATUS_OFFSET));
                assertEquals(frame.length, r.limit(), "the whole echo");
            }
            for (Thread t : senders) {
                t.join(10_000);
            }
        } finally {
            for (SocketChannel ch : hogs) {
                ch.close();
            }
        }
    }

    @Test
    void idleConnectionsGiveTheirChunksBack() throws Exception {
        int n = 40;
        List<SocketChannel> idle = new ArrayList<>();
        try (RpcServer server = server(cfg -> cfg.idleTimeout(Duration.ZERO))) {
            int chunksBefore = server.bufferPool().chunksInUse();
            for (int i = 0; i < n; i++) {
                SocketChannel ch = TestSupport.open(server.address());
                idle.add(ch);
                echoOn(ch, i + 1); // a receive chunk and a send chunk each, at least for a moment
            }
            TestSupport.await("chunks back while the connections stay open", Duration.ofSeconds(5),
                    () -> server.bufferPool().chunksInUse() <= chunksBefore);
            assertEquals(n, server.metrics().connectionsActive());
            for (int i = 0; i < n; i++) {
                echoOn(idle.get(i), 100 + i); // and each is served again, taking chunks anew
            }
        } finally {
            for (SocketChannel ch : idle) {
                ch.close();
            }
        }
    }
}
