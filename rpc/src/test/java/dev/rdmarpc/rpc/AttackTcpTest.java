package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 15, point 7: one server under every kind of bad peer at once, over TCP on 127.0.0.0/8, while
 * a good client keeps calling. Bounded: about 2,300 connections, each kind a fixed count, the whole
 * test well under a minute. What must hold: the good client's calls all succeed during and after,
 * with a p99 latency under {@link #P99_BOUND_MS} (a bound for a loaded 2-core CI machine; unloaded
 * it is about a millisecond); every refused peer is told why where the wire allows it; no large
 * buffer is taken for a frame that never arrives; and once the attackers are gone the server's
 * connections, buffers and file descriptors are back where they started.
 */
@Timeout(90)
class AttackTcpTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<byte[], byte[]> BYTES = Method.of("bytes", Codecs.BYTES, Codecs.BYTES);
    static final long P99_BOUND_MS = 250;
    static final int PER_ADDRESS = 400;
    static final int ONE_BYTE = 3 * PER_ADDRESS;   // from 127.0.0.2, .3 and .10
    static final int IDLE = 2 * PER_ADDRESS;       // from 127.0.0.4 and .5
    static final int OVER_LIMIT = 10;              // from 127.0.0.5, past its limit
    static final int HUGE = 20;
    static final int SLOW = 20;
    static final int BAD_VERSION = 20;
    static final int GARBAGE = 50;

    private final List<SocketChannel> all = new ArrayList<>();

    private SocketChannel from(String source, RpcServer server) throws IOException {
        SocketChannel ch = SocketChannel.open();
        all.add(ch);
        ch.bind(new InetSocketAddress(source, 0));
        ch.connect(server.address());
        ch.socket().setSoTimeout(5000);
        return ch;
    }

    private static long openFileDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** The connection-level error a refused peer reads first: its status and message. */
    private static String firstWord(SocketChannel ch, Status status) throws IOException {
        ByteBuffer f = TestSupport.readFrame(ch);
        assertNotNull(f, "told why before the close");
        assertEquals(FrameDescriptor.CONNECTION_REQUEST_ID, f.getLong(FrameDescriptor.REQUEST_ID_OFFSET));
        assertEquals(status.code(), f.getShort(FrameDescriptor.STATUS_OFFSET));
        return StandardCharsets.UTF_8.decode(f.position(FrameDescriptor.HEADER_LENGTH)).toString();
    }

    @Test
    void aGoodClientIsServedThroughEveryAttackAndTheServerGetsEverythingBack() throws Exception {
        try (RpcServer server = RpcServer.builder()
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .tcp(cfg -> cfg.frameReadTimeout(Duration.ofSeconds(1))
                        .limits(l -> l.maxConnectionsPerAddress(PER_ADDRESS)))
                .register(ECHO, (ctx, s) -> s)
                .register(BYTES, (ctx, b) -> b)
                .start();
             RpcClient good = RpcClient.builder().address(server.address()).maxFrameLength(4 << 20).connect()) {
            BufferPool pool = server.bufferPool();
            byte[] mib = new byte[1 << 20];
            new Random(1).nextBytes(mib);
            for (int i = 0; i < 200; i++) {
                assertEquals("warm", good.call(ECHO, "warm")); // classes loaded, JIT under way
            }
            assertArrayEquals(mib, good.call(BYTES, mib));
            Thread.sleep(100); // a few ticks: the good connection's chunks go back too
            int chunksBefore = pool.chunksInUse();
            long fdsBefore = openFileDescriptors();

            // The good client calls all through the attack: small echoes, and a 1 MiB call every 50th.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            AtomicInteger largeBuffersSeen = new AtomicInteger();
            long[] latencies = new long[200_000];
            AtomicInteger calls = new AtomicInteger();
            Thread caller = new Thread(() -> {
                try {
                    for (int i = 0; !stop.get() && i < latencies.length; i++) {
                        long t0 = System.nanoTime();
                        if (i % 50 == 49) {
                            assertArrayEquals(mib, good.call(BYTES, mib));
                        } else {
                            assertEquals("good " + i, good.call(ECHO, "good " + i));
                            latencies[calls.getAndIncrement()] = System.nanoTime() - t0;
                        }
                        if (pool.largeBuffersInUse() > 2) { // the good call's request and response at most
                            largeBuffersSeen.incrementAndGet();
                        }
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            }, "good-client");
            caller.start();

            List<SocketChannel> idle = new ArrayList<>();
            List<SocketChannel> overLimit = new ArrayList<>();
            List<SocketChannel> stalled = new ArrayList<>(); // one byte, a huge declared length, a slow frame
            List<SocketChannel> badVersion = new ArrayList<>();
            List<SocketChannel> garbage = new ArrayList<>();
            Thread slowWriter = null;
            try {
                for (int i = 0; i < IDLE; i++) {
                    idle.add(from(i < PER_ADDRESS ? "127.0.0.4" : "127.0.0.5", server));
                }
                for (int i = 0; i < OVER_LIMIT; i++) {
                    overLimit.add(from("127.0.0.5", server));
                }
                for (int i = 0; i < ONE_BYTE; i++) {
                    SocketChannel ch = from(i < PER_ADDRESS ? "127.0.0.2" : i < 2 * PER_ADDRESS ? "127.0.0.3" : "127.0.0.10", server);
                    stalled.add(ch);
                    TestSupport.write(ch, new byte[] {0x52});
                }
                byte[] huge = TestSupport.requestFrame(1, BYTES.id(), new byte[1000], new byte[0]);
                ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET, (16 << 20) - FrameDescriptor.HEADER_LENGTH);
                for (int i = 0; i < HUGE; i++) {
                    SocketChannel ch = from("127.0.0.6", server);
                    stalled.add(ch);
                    TestSupport.write(ch, huge); // declares 16 MiB, sends 1 KB
                }
                byte[] bad = TestSupport.requestFrame(2, ECHO.id(), new byte[10], new byte[0]);
                bad[FrameDescriptor.VERSION_OFFSET] = 9;
                for (int i = 0; i < BAD_VERSION; i++) {
                    SocketChannel ch = from("127.0.0.7", server);
                    badVersion.add(ch);
                    TestSupport.write(ch, bad);
                }
                Random random = new Random(15);
                for (int i = 0; i < GARBAGE; i++) {
                    SocketChannel ch = from("127.0.0.8", server);
                    garbage.add(ch);
                    byte[] noise = new byte[4096];
                    random.nextBytes(noise);
                    TestSupport.write(ch, noise);
                }
                List<SocketChannel> slow = new ArrayList<>();
                for (int i = 0; i < SLOW; i++) {
                    slow.add(from("127.0.0.9", server));
                }
                stalled.addAll(slow);
                byte[] slowFrame = TestSupport.requestFrame(3, BYTES.id(), new byte[100_000], new byte[0]);
                slowWriter = new Thread(() -> { // one byte per 20 ms each: 100 KB would take half an hour
                    for (int b = 0; b < 100 && !stop.get(); b++) {
                        for (SocketChannel ch : slow) {
                            try {
                                ch.write(ByteBuffer.wrap(slowFrame, b, 1));
                            } catch (IOException refused) {
                                // refused by now: the server stopped reading it
                            }
                        }
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "slow-writer");
                slowWriter.start();

                for (SocketChannel ch : overLimit) {
                    String why = firstWord(ch, Status.RESOURCE_EXHAUSTED);
                    assertTrue(why.contains("connection limit") && why.contains("127.0.0.5"), why);
                }
                for (SocketChannel ch : stalled) { // within the frame-read timeout (1 s) of their first byte
                    String why = firstWord(ch, Status.PROTOCOL_ERROR);
                    assertTrue(why.contains("frame incomplete") && why.contains("frameReadTimeout"), why);
                }
                for (SocketChannel ch : badVersion) {
                    String why = firstWord(ch, Status.PROTOCOL_ERROR);
                    assertTrue(why.contains("unsupported protocol version"), why);
                }
                for (SocketChannel ch : garbage) { // not this protocol at all: closed without a word
                    assertTrue(TestSupport.closedByPeer(ch), "garbage closed");
                }
                stop.set(true);
                caller.join(10_000);
                slowWriter.join(10_000);
                assertNull(failed.get(), () -> "the good client's call failed: " + failed.get());
                assertEquals(0, largeBuffersSeen.get(), "no large buffer for a frame that never arrived");
                // The idle connections stay (idleTimeout is 5 minutes) and hold no buffer.
                TestSupport.await("only idle connections left, holding no buffer", Duration.ofSeconds(10),
                        () -> server.metrics().connectionsActive() == 1 + IDLE && pool.chunksInUse() <= chunksBefore);
            } finally {
                stop.set(true);
                for (SocketChannel ch : all) {
                    ch.close();
                }
            }
            TestSupport.await("every attacker's connection closed", Duration.ofSeconds(10),
                    () -> server.metrics().connectionsActive() == 1);
            TestSupport.await("buffers back", Duration.ofSeconds(5),
                    () -> pool.chunksInUse() <= chunksBefore && pool.largeBuffersInUse() == 0);
            TestSupport.await("file descriptors back", Duration.ofSeconds(5), () -> {
                try {
                    return openFileDescriptors() <= fdsBefore + 2;
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });

            int n = calls.get();
            long[] sorted = Arrays.copyOf(latencies, n);
            Arrays.sort(sorted);
            long p50 = TimeUnit.NANOSECONDS.toMicros(sorted[n / 2]);
            long p99 = TimeUnit.NANOSECONDS.toMicros(sorted[(int) (n * 0.99)]);
            System.out.printf("AttackTcpTest: %d good calls during the attack, p50 %d us, p99 %d us, max %d us%n",
                    n, p50, p99, TimeUnit.NANOSECONDS.toMicros(sorted[n - 1]));
            assertTrue(n >= 50, "the good client kept calling: " + n);
            assertTrue(p99 < P99_BOUND_MS * 1000, "p99 " + p99 + " us");
            assertEquals("after", good.call(ECHO, "after"));
            assertArrayEquals(mib, good.call(BYTES, mib));
        }
    }
}
