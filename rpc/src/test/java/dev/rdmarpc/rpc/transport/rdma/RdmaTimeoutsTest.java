package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Stalled RDMA peers time out like TCP ones (issue 47, point 1), in the Soft-RoCE VM, with short
 * timeouts: a peer that stops half way through a 4 MiB frame is refused after
 * {@code timeouts.frameRead} and everything its connection held comes back; an idle connection, one
 * that completed its hello and never sent anything included, is closed after {@code timeouts.idle}
 * and its client told why; hellos that never complete (none sent, one cut short, one whose peer
 * never brings its queue pair up) expire.
 */
@RdmaTest
@Timeout(300)
class RdmaTimeoutsTest {
    private static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    private static final Method<byte[], byte[]> SLEEP = Method.of("sleep", Codecs.BYTES, Codecs.BYTES);
    private static final int MAX_FRAME = 16 << 20;

    private static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "timed out waiting for " + what);
            Thread.sleep(5);
        }
    }

    private static long liveQps() {
        return VerbsResources.live(ResourceKind.QUEUE_PAIR);
    }

    /** A transport-level handler that records what happens to its connection. */
    private static final class Recorder implements FrameHandler {
        final CompletableFuture<Throwable> closed = new CompletableFuture<>();
        final CompletableFuture<IOException> refused = new CompletableFuture<>();
        volatile long closedAt;

        @Override
        public void onFrame(Connection c, MemorySegment buffer, long offset, int length) {
        }

        @Override
        public void onTick(Connection c, long nowNanos) {
        }

        /** As a server does: says why in a connection-level error, then closes. */
        @Override
        public void onRefused(Connection c, IOException cause) {
            refused.complete(cause);
            byte[] why = String.valueOf(cause.getMessage()).getBytes(StandardCharsets.UTF_8);
            byte[] frame = new byte[FrameDescriptor.HEADER_LENGTH + why.length];
            MemorySegment seg = MemorySegment.ofArray(frame);
            new FrameHeaderEncoder().wrap(seg, 0).type(FrameDescriptor.TYPE_RESPONSE)
                    .requestId(FrameDescriptor.CONNECTION_REQUEST_ID).status(Status.PROTOCOL_ERROR.code())
                    .payloadLength(why.length);
            System.arraycopy(why, 0, frame, FrameDescriptor.HEADER_LENGTH, why.length);
            c.closeAfter(seg, cause);
        }

        @Override
        public void onClose(Connection c, Throwable cause) {
            closedAt = System.nanoTime();
            closed.complete(cause);
        }
    }

    /**
     * The client's I/O thread is held, so only its first window of messages leaves: 8 of 256 KiB, half
     * of a 4 MiB frame sent as split SENDs (the client's rendezvous is off: by default a frame this large
     * would be read by the server instead). The server refuses the connection one frame timeout (1 s) after the frame
     * started, says why, and its queue pair, receive and reassembly buffers and its address's claim
     * are back where they were before the client came.
     */
    @Test
    void aPeerThatStopsHalfWayThroughA4MiBFrameIsClosedWithinTheFrameTimeoutAndEverythingComesBack() throws Exception {
        Duration frameRead = Duration.ofSeconds(1);
        RdmaConfig serverConfig = RdmaTestEnv.smallConfig().timeouts(t -> t.frameRead(frameRead).idle(Duration.ZERO));
        Recorder serverSide = new Recorder();
        Recorder clientSide = new Recorder();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        long qps0 = liveQps();
        try (RdmaTransport serverT = RdmaTransport.create(serverConfig);
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().send(s -> s.window(8).rendezvousThreshold(0)));
             ServerEndpoint endpoint = serverT.listen(RdmaTestEnv.serverBind(), MAX_FRAME, c -> serverSide)) {
            long inUse0 = serverT.bytesInUse();
            InetAddress from = InetAddress.getByName(RdmaTestEnv.clientAddress());
            Connection conn = clientT.connect(endpoint.address(), MAX_FRAME, clientSide, Duration.ofMinutes(2));
            try {
                assertEquals(qps0 + 2, liveQps(), "a queue pair on each side");
                assertTrue(serverT.bytesInUse() > inUse0 && serverT.addressShares().claimed(from) > 0, "the server's receives");
                conn.execute(() -> {
                    held.countDown();
                    try {
                        release.await(60, TimeUnit.SECONDS); // the client's I/O thread harvests no completion meanwhile
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                assertTrue(held.await(30, TimeUnit.SECONDS), "the client's I/O thread is held");
                int length = 4 << 20;
                long at = conn.claim(length);
                assertTrue(at >= 0, "claimed: " + at);
                new FrameHeaderEncoder().wrap(conn.claimBuffer(), at).type(FrameDescriptor.TYPE_REQUEST).requestId(1)
                        .methodId(ECHO.id()).payloadLength(length - FrameDescriptor.HEADER_LENGTH);
                long sent = System.nanoTime();
                conn.commit(); // posted from this thread: the window's 8 messages, 2 MiB
                await("half the frame at the server", Duration.ofSeconds(30), () -> serverT.metrics().messagesReceived() >= 8);

                IOException why = serverSide.refused.get(frameRead.toSeconds() + 10, TimeUnit.SECONDS);
                assertTrue(why.getMessage().contains("frame incomplete after") && why.getMessage().contains("2097152 bytes")
                        && why.getMessage().contains("timeouts.frameRead"), why.getMessage());
                assertNotNull(serverSide.closed.get(10, TimeUnit.SECONDS));
                long took = serverSide.closedAt - sent;
                System.out.println("frame stalled at half: server closed " + TimeUnit.NANOSECONDS.toMillis(took)
                        + " ms after the frame was sent (" + why.getMessage() + "); server " + serverT.metrics());
                assertTrue(took >= frameRead.toNanos() && took < frameRead.toNanos() + TimeUnit.SECONDS.toNanos(4),
                        "closed " + took + " ns after the frame started");
                await("the server's queue pair destroyed", Duration.ofSeconds(10), () -> liveQps() == qps0 + 1);
                await("the server's buffers back", Duration.ofSeconds(10), () -> serverT.bytesInUse() == inUse0);
                assertEquals(0, serverT.addressShares().claimed(from), "the address's claim given back");
                assertEquals(0, serverT.bufferPool().largeBytesInUse(), "no reassembly buffer held");
            } finally {
                release.countDown();
            }
            clientSide.closed.get(30, TimeUnit.SECONDS); // the client hears of it once its thread runs again
            await("the client's queue pair destroyed", Duration.ofSeconds(10), () -> liveQps() == qps0);
        }
        assertEquals(qps0, liveQps());
    }

    /**
     * With a 1 s idle timeout: a client that connects and never calls (its hello done, nothing sent
     * over RDMA) is closed about 1 s after it connected, and one whose call is in flight for 2 s is not;
     * once that client is idle too it is closed, and its next call says why.
     */
    @Test
    void anIdleConnectionIsClosedFromItsFirstMomentAndOneWithACallInFlightIsNot() throws Exception {
        Duration idle = Duration.ofSeconds(1);
        long qps0 = liveQps();
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig().timeouts(t -> t.idle(idle)));
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                     .register(ECHO, (ctx, b) -> b)
                     .registerBlocking(SLEEP, (ctx, b) -> {
                         Thread.sleep(2000);
                         return b;
                     }).start();
             RpcClient busy = RpcClient.builder().address(server.address()).transport(clientT).connect()) {
            assertArrayEquals(new byte[] {1}, busy.call(ECHO, new byte[] {1}));
            CompletableFuture<byte[]> call = busy.callAsync(SLEEP, new byte[] {2}); // two idle timeouts long
            long start = System.nanoTime();
            try (RpcClient silent = RpcClient.builder().address(server.address()).transport(clientT).connect()) {
                await("the silent client closed", Duration.ofSeconds(10), () -> !silent.isOpen());
                long took = System.nanoTime() - start;
                System.out.println("silent client closed after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms");
                assertTrue(took >= idle.toNanos() && took < idle.toNanos() + TimeUnit.SECONDS.toNanos(6),
                        "closed " + took + " ns after it connected");
            }
            assertArrayEquals(new byte[] {2}, call.get(30, TimeUnit.SECONDS), "the call in flight kept its connection");
            await("the busy client closed once idle", Duration.ofSeconds(10), () -> !busy.isOpen());
            RpcException e = assertThrows(RpcException.class, () -> busy.call(ECHO, new byte[] {3}));
            assertEquals(Status.CONNECTION_CLOSED, e.status(), e::toString);
            assertTrue(e.getMessage().contains("closed after") && e.getMessage().contains("idle"), e.getMessage());
            await("the server's buffers back", Duration.ofSeconds(10), () -> serverT.bytesInUse() == 0);
            await("the queue pairs destroyed", Duration.ofSeconds(10), () -> liveQps() == qps0);
        }
    }

    /**
     * Hellos that never complete, with a 1 s idle and a 500 ms frame timeout: a TCP connection that
     * sends nothing is closed after the idle timeout, one that sends half a hello after the frame
     * timeout (told why), and neither gets a queue pair; a complete hello whose peer never brings its
     * queue pair up (nothing answers at its queue pair number) holds the server's queue pair and
     * buffers only until the idle timeout.
     */
    @Test
    void helloesThatNeverCompleteExpire() throws Exception {
        long qps0 = liveQps();
        RdmaConfig config = RdmaTestEnv.smallConfig()
                .timeouts(t -> t.idle(Duration.ofSeconds(1)).frameRead(Duration.ofMillis(500)));
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                     .register(ECHO, (ctx, b) -> b).start()) {
            InetSocketAddress address = server.address();
            long made0 = VerbsResources.created(ResourceKind.QUEUE_PAIR);
            Hello hello = helloFromNowhere();
            byte[] frame = new byte[Hello.FRAME_LENGTH];
            hello.encode(MemorySegment.ofArray(frame), 0);
            long opened = System.nanoTime(); // before the connects: the server times idleness from its accept
            try (Socket silent = new Socket(address.getAddress(), address.getPort());
                 Socket half = new Socket(address.getAddress(), address.getPort())) {
                silent.setSoTimeout(15_000);
                half.setSoTimeout(15_000);
                half.getOutputStream().write(frame, 0, 40); // the header and 8 of its 48 bytes
                half.getOutputStream().flush();
                String why = lastWord(half.getInputStream());
                long halfTook = System.nanoTime() - opened;
                assertTrue(why.contains("frame incomplete"), why);
                assertEquals(-1, silent.getInputStream().read(), "closed");
                long silentTook = System.nanoTime() - opened;
                System.out.println("half a hello refused after " + TimeUnit.NANOSECONDS.toMillis(halfTook) + " ms (" + why
                        + "), no hello closed after " + TimeUnit.NANOSECONDS.toMillis(silentTook) + " ms");
                // the upper bounds leave room for a first refusal in a JVM under the VM's emulated CPU
                // (seconds of class loading); the server's message gives the time it measured
                assertTrue(halfTook >= TimeUnit.MILLISECONDS.toNanos(500) && halfTook < TimeUnit.SECONDS.toNanos(10), "" + halfTook);
                assertTrue(silentTook >= TimeUnit.SECONDS.toNanos(1) && silentTook < TimeUnit.SECONDS.toNanos(10), "" + silentTook);
            }
            assertEquals(made0, VerbsResources.created(ResourceKind.QUEUE_PAIR), "no queue pair for either");

            try (Socket ghost = new Socket(address.getAddress(), address.getPort())) {
                ghost.setSoTimeout(120_000); // the server's first queue pair in this JVM takes seconds under emulation
                ghost.getOutputStream().write(frame);
                ghost.getOutputStream().flush();
                byte[] answer = ghost.getInputStream().readNBytes(Hello.FRAME_LENGTH);
                long start = System.nanoTime(); // the server's connection was attached just before it answered
                assertEquals(Hello.FRAME_LENGTH, answer.length, "the server's accepting hello");
                new Hello().decode(MemorySegment.ofArray(answer), 0, answer.length);
                assertEquals(made0 + 1, VerbsResources.created(ResourceKind.QUEUE_PAIR), "the server's queue pair");
                assertTrue(serverT.bytesInUse() > 0, "and its receive buffers");
                assertEquals(-1, ghost.getInputStream().read(), "closed");
                long took = System.nanoTime() - start;
                await("the server's queue pair destroyed", Duration.ofSeconds(10), () -> liveQps() == qps0);
                await("the server's buffers back", Duration.ofSeconds(10), () -> serverT.bytesInUse() == 0);
                System.out.println("a hello whose peer never came up: closed after " + TimeUnit.NANOSECONDS.toMillis(took)
                        + " ms; server " + serverT.metrics());
                // the idle timeout, then the last word's send, which nothing acknowledges: it fails after
                // its retries, or the connection closes when the last word's 5 s are over
                assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(900) && took < TimeUnit.SECONDS.toNanos(1)
                        + RdmaLastWord.LINGER_NANOS + TimeUnit.SECONDS.toNanos(4), "" + took);
                assertEquals(0, serverT.addressShares().claimed(InetAddress.getByName(RdmaTestEnv.clientAddress())));
            }
        }
    }

    /**
     * A well-formed hello for the client's address (its RoCE v2 GID, the IPv4-mapped address) and a
     * queue pair number nothing answers at.
     */
    private static Hello helloFromNowhere() throws IOException {
        Hello h = new Hello();
        h.qpn = 0xABCDE;
        h.psn = 1;
        byte[] ip = InetAddress.getByName(RdmaTestEnv.clientAddress()).getAddress();
        h.gid[10] = (byte) 0xff;
        h.gid[11] = (byte) 0xff;
        System.arraycopy(ip, 0, h.gid, 12, 4);
        h.mtu = 3; // 1024
        h.receiveSize = 256 << 10;
        h.receiveCount = 8;
        h.maxFrameLength = MAX_FRAME;
        return h;
    }

    /** Reads the connection-level error a server sends before it closes, and the close; its message. */
    private static String lastWord(InputStream in) throws IOException {
        byte[] header = in.readNBytes(FrameDescriptor.HEADER_LENGTH);
        assertEquals(FrameDescriptor.HEADER_LENGTH, header.length, "the server says why before it closes");
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(FrameDescriptor.TYPE_RESPONSE, h.get(FrameDescriptor.TYPE_OFFSET));
        assertEquals(FrameDescriptor.CONNECTION_REQUEST_ID, h.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
        byte[] message = in.readNBytes(h.getInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET));
        assertEquals(-1, in.read(), "closed after its last word");
        return new String(message, StandardCharsets.UTF_8);
    }
}
