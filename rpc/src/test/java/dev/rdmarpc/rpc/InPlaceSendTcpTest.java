package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.frame.FrameReassembler;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RpcClient#sendInPlace} over TCP: the payload goes to the socket from the caller's memory,
 * an echo goes back from the server's receive buffer, and neither side reads memory it no longer
 * owns: a call that ends before its request was all written has the rest copied first, and a server
 * whose client vanished releases the receive buffers its responses were sending from.
 */
@Timeout(60)
class InPlaceSendTcpTest {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("inplace.echo");

    private static RpcServer echoServer() {
        return RpcServer.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .maxFrameLength(16 << 20)
                .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()))
                .start();
    }

    private static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
    }

    private static boolean matches(MemorySegment buf, long off, long len, int seed) {
        for (long i = 0; i < len; i++) {
            if (buf.get(ValueLayout.JAVA_BYTE, off + i) != (byte) (i * 31 + seed)) {
                return false;
            }
        }
        return true;
    }

    /** Completes with the echoed payload's check, or the error. */
    private static final class Check implements ResponseListener {
        final CompletableFuture<Boolean> done = new CompletableFuture<>();
        final long length;
        final int seed;

        Check(long length, int seed) {
            this.length = length;
            this.seed = seed;
        }

        @Override
        public void onResponse(long tag, ResponseView r) {
            done.complete(r.payloadLength() == length && matches(r.buffer(), r.payloadOffset(), length, seed));
        }

        @Override
        public void onError(long tag, RpcException e) {
            done.completeExceptionally(e);
        }
    }

    @Test
    void echoesEverySizeAndNeedsOneLargeBufferPerCallOnEachSide() throws Exception {
        int[] sizes = {100, 16 * 1024 - 1, 16 * 1024, 64 * 1024 + 1, 1 << 20, 8 << 20};
        TcpTransport clientTransport = TcpTransport.create(new TcpConfig());
        try (RpcServer server = echoServer(); Arena arena = Arena.ofShared()) {
            BufferPool sp = server.bufferPool();
            BufferPool cp = clientTransport.bufferPool();
            try (RpcClient client = RpcClient.builder().address(server.address()).transport(clientTransport)
                    .maxFrameLength(16 << 20).connect()) {
                for (int round = 0; round < 3; round++) {
                    for (int size : sizes) {
                        int calls = size >= (8 << 20) ? 2 : 8;
                        long serverLarge = sp.largeAcquires();
                        long clientLarge = cp.largeAcquires();
                        Check[] checks = new Check[calls];
                        MemorySegment[] payloads = new MemorySegment[calls];
                        for (int i = 0; i < calls; i++) {
                            payloads[i] = arena.allocate(size);
                            fill(payloads[i], i + round);
                            checks[i] = new Check(size, i + round);
                            assertTrue(client.sendInPlace(ECHO, payloads[i], checks[i], i), "sent");
                        }
                        for (int i = 0; i < calls; i++) {
                            assertTrue(checks[i].done.get(20, TimeUnit.SECONDS), "echo of " + size + " bytes, call " + i);
                        }
                        if (size > sp.chunkSize()) {
                            // A copying path takes two large buffers per call on each side (one to receive
                            // a frame, one to send one); in place, only the received frame needs one: on
                            // the server, those its buffer grows through as the frame's bytes arrive.
                            int received = FrameReassembler.buffersFor(size + FrameDescriptor.HEADER_LENGTH, sp.chunkSize());
                            assertEquals((long) calls * received, sp.largeAcquires() - serverLarge, "server, " + size + " bytes");
                            assertEquals(calls, cp.largeAcquires() - clientLarge, "client, " + size + " bytes");
                        }
                    }
                }
                TestSupport.await("large buffers back", Duration.ofSeconds(5),
                        () -> sp.largeBuffersInUse() == 0 && cp.largeBuffersInUse() == 0);
            }
        } finally {
            clientTransport.close();
        }
    }

    /**
     * A burst of 400 echoes of 16 to 64 KiB, sent in place: each takes two entries of the client's
     * send ring, and the server stops reading while half of its ring is taken rather than answer
     * "send queue full". Every byte checked, every chunk back once the client is gone.
     */
    @Test
    void aBurstOfMidSizeEchoesStaysExactAndGivesTheChunksBack() throws Exception {
        try (RpcServer server = echoServer(); Arena arena = Arena.ofShared()) {
            BufferPool sp = server.bufferPool();
            java.util.Random random = new java.util.Random(42);
            for (int round = 0; round < 3; round++) {
                try (RpcClient client = RpcClient.builder().address(server.address()).maxFrameLength(16 << 20).connect()) {
                    int calls = 400;
                    Check[] checks = new Check[calls];
                    for (int i = 0; i < calls; i++) {
                        int size = 16 * 1024 + random.nextInt(48 * 1024);
                        MemorySegment payload = arena.allocate(size);
                        fill(payload, i);
                        checks[i] = new Check(size, i);
                        while (!client.sendInPlace(ECHO, payload, checks[i], i)) {
                            Thread.onSpinWait(); // back-pressured: the send queue drains
                        }
                    }
                    for (int i = 0; i < calls; i++) {
                        assertTrue(checks[i].done.get(20, TimeUnit.SECONDS), "echo " + i);
                    }
                }
                // Only the listener's own chunk may stay taken (none once the client is gone).
                TestSupport.await("the server's chunks back", Duration.ofSeconds(5), () -> sp.chunksInUse() == 0);
            }
        }
    }

    /**
     * A client that sends 300 echoes of 100 KiB before it reads any answer, to a server whose write
     * high-water mark (64 MiB) is far above what they add up to: each response sent from its request
     * buffer takes two entries of the server's send ring, so the ring, not the mark, fills first.
     * The server stops reading there instead of answering "send queue full": every call succeeds.
     */
    @Test
    void aServerWhoseSendRingFillsStopsReadingInsteadOfRefusing() throws Exception {
        int size = 100 * 1024;
        int calls = 300;
        TcpTransport serverTransport = TcpTransport.create(new TcpConfig().writeHighWaterMark(64L << 20));
        try (RpcServer server = RpcServer.builder().transport(serverTransport).maxFrameLength(16 << 20)
                     .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength())).start();
             SocketChannel ch = TestSupport.open(server.address())) {
            byte[] payload = new byte[size];
            fill(MemorySegment.ofArray(payload), 9);
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < calls; i++) {
                        TestSupport.write(ch, TestSupport.requestFrame(i + 1, ECHO.id(), payload, new byte[0]));
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(500); // the server answers into its ring while nobody reads
            for (int i = 0; i < calls; i++) {
                ByteBuffer response = TestSupport.readFrame(ch);
                assertNotNull(response, "response " + i);
                MemorySegment r = MemorySegment.ofBuffer(response);
                assertEquals(FrameDescriptor.STATUS_OK, FrameHeader.status(r, 0), "status of response " + i);
                assertEquals(i + 1, FrameHeader.requestId(r, 0));
                assertTrue(matches(r, FrameDescriptor.HEADER_LENGTH, size, 9));
            }
            writer.join(10_000);
        } finally {
            serverTransport.close();
        }
    }

    /** Once a call has ended, nothing in the client keeps its in-place payload reachable (an automatic arena's memory is freed). */
    @Test
    void anEndedCallKeepsNoPayloadReachable() throws Exception {
        try (RpcServer server = echoServer();
             RpcClient client = RpcClient.builder().address(server.address()).maxFrameLength(16 << 20).connect()) {
            java.lang.ref.WeakReference<MemorySegment> sent = sendOnce(client);
            for (int i = 0; i < 50 && sent.get() != null; i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertNull(sent.get(), "the payload of an ended call is still reachable");
            sendOnce(client); // and the connection still echoes (sendOnce checks the answer)
        }
    }

    private static java.lang.ref.WeakReference<MemorySegment> sendOnce(RpcClient client) throws Exception {
        MemorySegment payload = Arena.ofAuto().allocate(256 * 1024);
        fill(payload, 5);
        Check check = new Check(payload.byteSize(), 5);
        assertTrue(client.sendInPlace(ECHO, payload, check, 0));
        assertTrue(check.done.get(10, TimeUnit.SECONDS));
        return new java.lang.ref.WeakReference<>(payload);
    }

    @Test
    void aCallThatTimesOutBeforeItsRequestIsWrittenNoLongerReadsThePayload() throws Exception {
        int size = 8 << 20;
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             Arena arena = Arena.ofShared();
             RpcClient client = RpcClient.builder().address((InetSocketAddress) silent.getLocalAddress())
                     .maxFrameLength(16 << 20).defaultTimeout(Duration.ofMillis(300)).connect();
             SocketChannel peer = silent.accept()) {
            MemorySegment payload = arena.allocate(size);
            fill(payload, 7);
            CompletableFuture<RpcException> failed = new CompletableFuture<>();
            assertTrue(client.sendInPlace(ECHO, payload, new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView response) {
                    failed.completeExceptionally(new AssertionError("a peer that never reads cannot answer"));
                }

                @Override
                public void onError(long tag, RpcException e) {
                    payload.fill((byte) 0); // the caller may reuse its memory once it hears
                    failed.complete(e);
                }
            }, 0));
            assertEquals(Status.DEADLINE_EXCEEDED, failed.get(10, TimeUnit.SECONDS).status());
            // Only now does the peer read: every byte it gets is the payload as it was when sent.
            peer.socket().setSoTimeout(10_000);
            ByteBuffer frame = TestSupport.readFrame(peer);
            assertNotNull(frame);
            MemorySegment f = MemorySegment.ofBuffer(frame);
            assertEquals(size, FrameHeader.payloadLength(f, 0));
            assertTrue(matches(f, FrameDescriptor.HEADER_LENGTH, size, 7), "the unsent rest was copied before the caller heard");
            assertTrue(client.isOpen());
        }
    }

    @Test
    void aResponseThatOvertakesItsRequestStillLeavesTheRequestWhole() throws Exception {
        int size = 8 << 20;
        try (ServerSocketChannel rude = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             Arena arena = Arena.ofShared();
             RpcClient client = RpcClient.builder().address((InetSocketAddress) rude.getLocalAddress())
                     .maxFrameLength(16 << 20).connect();
             SocketChannel peer = rude.accept()) {
            MemorySegment payload = arena.allocate(size);
            fill(payload, 3);
            CompletableFuture<Integer> answered = new CompletableFuture<>();
            assertTrue(client.sendInPlace(ECHO, payload, new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView response) {
                    payload.fill((byte) 0);
                    answered.complete(response.payloadLength());
                }

                @Override
                public void onError(long tag, RpcException e) {
                    answered.completeExceptionally(e);
                }
            }, 0));
            // Answer from the header alone, long before the payload can all have been written.
            peer.socket().setSoTimeout(10_000);
            ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            var in = peer.socket().getInputStream();
            while (header.hasRemaining()) {
                int n = in.read(header.array(), header.position(), header.remaining());
                assertTrue(n > 0);
                header.position(header.position() + n);
            }
            long id = FrameHeader.requestId(MemorySegment.ofArray(header.array()), 0);
            byte[] response = new byte[FrameDescriptor.HEADER_LENGTH];
            new FrameHeaderEncoder().wrap(MemorySegment.ofArray(response), 0).type(FrameDescriptor.TYPE_RESPONSE).requestId(id)
                    .methodId(ECHO.id());
            TestSupport.write(peer, response);
            assertEquals(0, answered.get(10, TimeUnit.SECONDS));
            byte[] rest = new byte[size];
            int got = 0;
            while (got < size) {
                int n = in.read(rest, got, size - got);
                assertTrue(n > 0);
                got += n;
            }
            assertTrue(matches(MemorySegment.ofArray(rest), 0, size, 3), "the request arrived as it was sent");
        }
    }

    @Test
    void aServerWhoseClientVanishedReleasesTheBuffersItsEchoesSentFrom() throws Exception {
        int size = 1 << 20;
        try (RpcServer server = echoServer(); Arena arena = Arena.ofShared()) {
            BufferPool sp = server.bufferPool();
            for (int round = 0; round < 3; round++) {
                RpcClient client = RpcClient.builder().address(server.address()).maxFrameLength(16 << 20).connect();
                MemorySegment payload = arena.allocate(size);
                fill(payload, round);
                Check first = new Check(size, round);
                assertTrue(client.sendInPlace(ECHO, payload, first, 0));
                assertTrue(first.done.get(10, TimeUnit.SECONDS));
                for (int i = 0; i < 32; i++) {
                    client.sendInPlace(ECHO, payload, new Check(size, round), i);
                }
                client.close(); // while the server still answers
            }
            TestSupport.await("the server's large buffers back", Duration.ofSeconds(10), () -> sp.largeBuffersInUse() == 0);
        }
    }
}
