package dev.rdmarpc.rpc.gpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Attachments through a loopback RPC over TCP: host attachments (device id -1) in full, and the
 * device-attachment path of the core (validation, held frames overlapping the copy with the socket
 * writes, landing in a provided buffer, failures) with {@link FakeDeviceStaging}, i.e. without a GPU.
 */
@Timeout(60)
class AttachmentTcpTest {
    /** Echoes the request attachment (host view) back as the response attachment; answers "HOST/-1/len". */
    static final Method<String, String> ECHO = Method.of("att.echo", Codecs.STRING, Codecs.STRING);
    /** Answers with n bytes of fake GPU memory of the server, from a blocking handler (virtual thread). */
    static final Method<Integer, String> GPU_BLOCKING = Method.of("att.gpuBlocking", Codecs.INT, Codecs.STRING);
    /** The same from an inline handler (I/O thread). */
    static final Method<Integer, String> GPU_INLINE = Method.of("att.gpuInline", Codecs.INT, Codecs.STRING);

    static final int CHUNK = 64 << 10;
    static final int SERVER_GPU_BYTES = 6 << 20;
    static FakeDeviceStaging serverGpu;
    static MemorySegment serverGpuMemory;
    static RpcServer server;
    static RpcClient client;
    static FakeDeviceStaging clientGpu;
    static Arena arena;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        serverGpu = new FakeDeviceStaging(0, CHUNK);
        serverGpuMemory = serverGpu.allocate(SERVER_GPU_BYTES);
        fill(serverGpuMemory, 5);
        server = RpcServer.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(ECHO, (ctx, req) -> {
                    Attachment a = ctx.requestAttachment();
                    ctx.responseAttachment(a);
                    return req + ":" + a.location() + "/" + a.deviceId() + "/" + a.length();
                })
                .registerBlocking(GPU_BLOCKING, (ctx, n) -> {
                    ctx.responseAttachment(serverGpu.attachment(serverGpuMemory.asSlice(0, n)));
                    return "blocking:" + n;
                })
                .register(GPU_INLINE, (ctx, n) -> {
                    ctx.responseAttachment(serverGpu.attachment(serverGpuMemory.asSlice(0, n)));
                    return "inline:" + n;
                })
                .start();
        client = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofSeconds(20)).connect();
        clientGpu = new FakeDeviceStaging(0, CHUNK);
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
        serverGpu.close();
        clientGpu.close();
        arena.close();
    }

    @AfterEach
    void resetHooks() {
        serverGpu.failAfterChunks = -1;
        clientGpu.failAfterChunks = -1;
        clientGpu.hook = (d, l) -> { };
    }

    static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 131 + seed + (i >> 9)));
        }
    }

    static MemorySegment host(long n, int seed) {
        MemorySegment s = arena.allocate(n);
        fill(s, seed);
        return s;
    }

    // ================================================================ host memory

    @Test
    void hostAttachmentsRoundTripWithDeviceIdMinusOne() {
        for (int n : new int[] {1, 1000, 300_000, 3 << 20}) {
            MemorySegment req = host(n, n);
            Attachment a = Attachment.of(req);
            assertEquals(Attachment.Location.HOST, a.location());
            assertEquals(-1, a.deviceId());
            Reply<String> r = client.exchange(ECHO, "h", CallOptions.DEFAULT.withAttachment(a));
            assertEquals("h:HOST/-1/" + n, r.value(), "the server sees a host attachment");
            assertEquals(Attachment.Location.HOST, r.attachment().location());
            assertEquals(-1, r.attachment().deviceId());
            assertEquals(-1, r.attachment().segment().mismatch(req), "bytes of " + n);
        }
        assertEquals(Attachment.NONE, client.exchange(ECHO, "none", CallOptions.DEFAULT).attachment());
    }

    @Test
    void hostResponseLandsInTheProvidedBuffer() {
        MemorySegment req = host(200_000, 1);
        MemorySegment target = arena.allocate(256_000);
        Attachment into = Attachment.of(target);
        long copied0 = client.metrics().responseAttachmentBytesCopied();
        Reply<String> r = client.exchange(ECHO, "t", CallOptions.DEFAULT.withAttachment(Attachment.of(req))
                .withResponseAttachment(into));
        assertEquals(target.address(), r.attachment().address(), "no copy of its own: the caller's buffer");
        assertEquals(200_000, r.attachment().length());
        assertEquals(200_000, client.metrics().responseAttachmentBytesCopied() - copied0,
                "over TCP the attachment is copied from the read buffer into the target, and counted");
        assertEquals(-1, target.asSlice(0, 200_000).mismatch(req));
        // the plain call path lands it too
        MemorySegment again = arena.allocate(256_000);
        assertEquals("t:HOST/-1/200000", client.call(ECHO, "t", CallOptions.DEFAULT.withAttachment(Attachment.of(req))
                .withResponseAttachment(Attachment.of(again))));
        assertEquals(-1, again.asSlice(0, 200_000).mismatch(req));
    }

    @Test
    void aResponseAttachmentTooLargeForTheProvidedBufferFailsTheCallOnly() {
        MemorySegment req = host(5000, 2);
        RpcException e = assertThrows(RpcException.class, () -> client.exchange(ECHO, "s",
                CallOptions.DEFAULT.withAttachment(Attachment.of(req)).withResponseAttachment(Attachment.of(arena.allocate(4999)))));
        assertEquals(Status.PAYLOAD_TOO_LARGE, e.status());
        assertTrue(e.getMessage().contains("5000 bytes does not fit"), e.getMessage());
        assertEquals("ok:HOST/-1/0", client.call(ECHO, "ok"), "the connection is fine");
        assertThrows(IllegalArgumentException.class,
                () -> CallOptions.DEFAULT.withResponseAttachment(Attachment.NONE));
        try (Arena confined = Arena.ofConfined()) {
            IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
                    () -> CallOptions.DEFAULT.withResponseAttachment(Attachment.of(confined.allocate(64))));
            assertTrue(e2.getMessage().contains("confined"), e2.getMessage());
        }
    }

    // ================================================================ device attachments (fake GPU)

    @Test
    void deviceAttachmentsSayWhereTheyLive() {
        MemorySegment gpu = clientGpu.allocate(100);
        Attachment a = clientGpu.attachment(gpu);
        assertEquals(Attachment.Location.DEVICE, a.location());
        assertEquals(0, a.deviceId());
        assertEquals(gpu.address(), a.address());
        assertSame(clientGpu, a.staging());
        assertEquals("Attachment[GPU 0, 100 bytes]", a.toString());
        assertThrows(IllegalStateException.class, a::segment, "no host view of GPU memory");
        assertEquals(40, a.prefix(40).length());
        assertEquals(a.address(), a.prefix(40).address());
        assertSame(Attachment.NONE, Attachment.device(0, 1234, 0, clientGpu));
        assertThrows(IllegalArgumentException.class, () -> Attachment.device(-1, 1234, 8, clientGpu));
        assertThrows(IllegalArgumentException.class, () -> Attachment.device(0, 0, 8, clientGpu));
        assertThrows(IndexOutOfBoundsException.class, () -> a.prefix(101));
    }

    @Test
    void deviceRequestAndDeviceResponseTargetRoundTrip() {
        int n = (5 << 20) + 3;
        MemorySegment req = clientGpu.allocate(n);
        fill(req, 11);
        MemorySegment resp = clientGpu.allocate(n + 10);
        int toHost = clientGpu.copiesToHost.get();
        int toDevice = clientGpu.copiesToDevice.get();
        Reply<String> r = client.exchange(ECHO, "g", CallOptions.DEFAULT.withAttachment(clientGpu.attachment(req))
                .withResponseAttachment(clientGpu.attachment(resp)));
        assertEquals("g:HOST/-1/" + n, r.value(), "over TCP the server reads the bytes in host memory");
        assertEquals(Attachment.Location.DEVICE, r.attachment().location());
        assertEquals(resp.address(), r.attachment().address());
        assertEquals(n, r.attachment().length());
        assertEquals(-1, resp.asSlice(0, n).mismatch(req), "bytes landed in (fake) GPU memory");
        assertEquals(toHost + 1, clientGpu.copiesToHost.get());
        assertEquals(toDevice + 1, clientGpu.copiesToDevice.get());
    }

    @Test
    void serverDeviceResponsesFromBlockingAndInlineHandlers() {
        for (Method<Integer, String> m : List.of(GPU_BLOCKING, GPU_INLINE)) {
            for (int n : new int[] {1, CHUNK, CHUNK + 1, 3 << 20}) {
                Reply<String> r = client.exchange(m, n, CallOptions.DEFAULT);
                assertTrue(r.value().endsWith(":" + n), r.value());
                assertEquals(-1, r.attachment().segment().mismatch(serverGpuMemory.asSlice(0, n)), m.name() + " " + n);
                MemorySegment gpu = clientGpu.allocate(n);
                Reply<String> d = client.exchange(m, n, CallOptions.DEFAULT.withResponseAttachment(clientGpu.attachment(gpu)));
                assertEquals(n, d.attachment().length());
                assertEquals(-1, gpu.mismatch(serverGpuMemory.asSlice(0, n)), m.name() + " to fake GPU " + n);
            }
        }
    }

    @Test
    void concurrentDeviceAndHostCallsShareOneConnection() throws Exception {
        int threads = 4;
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            all.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 15; i++) {
                    int n = (id + 1) * 100_000 + i;
                    MemorySegment req = clientGpu.allocate(n);
                    fill(req, id * 100 + i);
                    Reply<String> r = client.exchange(ECHO, "c" + id, CallOptions.DEFAULT.withAttachment(clientGpu.attachment(req)));
                    assertEquals("c" + id + ":HOST/-1/" + n, r.value());
                    assertEquals(-1, r.attachment().segment().mismatch(req), "thread " + id + " call " + i);
                    assertEquals("p" + i + ":HOST/-1/0", client.call(ECHO, "p" + i));
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(50, TimeUnit.SECONDS);
    }

    @Test
    void anAttachmentThatIsNotDeviceMemoryIsRefusedBeforeAnythingIsSent() {
        long calls = client.metrics().calls();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> client.call(ECHO, "bad",
                CallOptions.DEFAULT.withAttachment(Attachment.device(0, 0x1000, 64, clientGpu))));
        assertTrue(e.getMessage().contains("not fake device memory"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> client.call(ECHO, "bad", CallOptions.DEFAULT
                .withResponseAttachment(Attachment.device(7, clientGpu.allocate(8).address(), 8, clientGpu))));
        assertEquals(calls, client.metrics().calls(), "nothing sent");
        assertEquals("fine:HOST/-1/0", client.call(ECHO, "fine"));
    }

    @Test
    void aServerCopyFailureBeforeCommitAnswersWithAnError() {
        serverGpu.failAfterChunks = 1; // inline handler: copied under the claim, so the frame is aborted
        RpcException e = assertThrows(RpcException.class, () -> client.call(GPU_INLINE, 3 * CHUNK));
        assertEquals(Status.HANDLER_FAILED, e.status());
        assertTrue(e.getMessage().contains("could not be copied from GPU 0: fake GPU copy failed after 1 chunks"), e.getMessage());
        serverGpu.failAfterChunks = -1;
        assertEquals("inline:10", client.call(GPU_INLINE, 10), "the connection carries on");
    }

    // ================================================================ the copy overlaps the socket

    @Test
    void theHeaderAndFirstChunkReachTheSocketWhileTheRestIsStillBeingCopied() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             FakeDeviceStaging gpu = new FakeDeviceStaging(0, CHUNK);
             RpcClient c = RpcClient.builder().address((InetSocketAddress) listener.getLocalAddress())
                     .defaultTimeout(Duration.ofSeconds(20)).connect();
             SocketChannel peer = listener.accept()) {
            peer.socket().setSoTimeout(10_000);
            int n = 8 * CHUNK;
            MemorySegment req = gpu.allocate(n);
            fill(req, 77);
            CountDownLatch firstChunkSeen = new CountDownLatch(1);
            AtomicReference<String> hookProblem = new AtomicReference<>();
            gpu.hook = (done, length) -> {
                if (done == CHUNK) { // hold the copy until the peer has read header, payload and chunk 1
                    try {
                        if (!firstChunkSeen.await(10, TimeUnit.SECONDS)) {
                            hookProblem.set("the peer never saw the first chunk while the copy was held");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            CompletableFuture<Reply<String>> call = CompletableFuture.supplyAsync(
                    () -> c.exchange(ECHO, "ov", CallOptions.DEFAULT.withAttachment(gpu.attachment(req))));

            InputStream in = peer.socket().getInputStream();
            ByteBuffer header = ByteBuffer.wrap(in.readNBytes(FrameDescriptor.HEADER_LENGTH)).order(ByteOrder.LITTLE_ENDIAN);
            int plen = header.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET);
            assertEquals(n, header.getInt(FrameDescriptor.ATTACHMENT_LENGTH_OFFSET));
            in.readNBytes(plen);
            byte[] first = in.readNBytes(CHUNK); // blocks (and times out) unless the frame went out held
            assertEquals(CHUNK, first.length);
            assertEquals(-1, MemorySegment.ofArray(first).mismatch(req.asSlice(0, CHUNK)));
            assertFalse(call.isDone(), "the copy is still held in the hook");
            firstChunkSeen.countDown();
            byte[] rest = in.readNBytes(n - CHUNK);
            assertEquals(-1, MemorySegment.ofArray(rest).mismatch(req.asSlice(CHUNK, n - CHUNK)));
            assertEquals(null, hookProblem.get());
            peer.close(); // no answer: the call fails with the closed connection
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(20, TimeUnit.SECONDS));
            assertEquals(Status.CONNECTION_CLOSED, ((RpcException) e.getCause()).status());
        }
    }

    @Test
    void aCopyFailingMidFrameClosesTheConnectionAndFreesItsBuffers() throws Exception {
        try (RpcClient c = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofSeconds(20)).connect();
             FakeDeviceStaging gpu = new FakeDeviceStaging(0, CHUNK)) {
            assertEquals("warm:HOST/-1/0", c.call(ECHO, "warm"));
            long served = server.metrics().calls();
            MemorySegment req = gpu.allocate(16 * CHUNK);
            gpu.failAfterChunks = 3;
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> c.call(ECHO, "x", CallOptions.DEFAULT.withAttachment(gpu.attachment(req))));
            assertEquals("fake GPU copy failed after 3 chunks", e.getMessage());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (c.isOpen() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertFalse(c.isOpen(), "a frame cannot be taken back once sent: the connection is closed");
            RpcException closed = assertThrows(RpcException.class, () -> c.call(ECHO, "after"));
            assertEquals(Status.CONNECTION_CLOSED, closed.status());
            // isOpen() turns false as the close starts; the I/O thread releases the buffers a moment later
            while (c.bufferPool().chunksInUse() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(0, c.bufferPool().chunksInUse(), "the held frame's buffer was released too");
            assertEquals(0, c.bufferPool().largeBuffersInUse());
            assertEquals(served, server.metrics().calls(), "the server never got the incomplete frame");
        }
        assertNotEquals(null, client.call(ECHO, "others unaffected"));
    }
}
