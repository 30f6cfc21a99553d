package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Throws at least 100,000 random and mutated frames at a live server over loopback, then checks
 * that it still answers correctly, that nothing leaked, and that it survived every bad connection.
 * Bounded: the frame budget is met in a few seconds; the whole test is capped at 60 s.
 */
@Timeout(60)
class FuzzTest {
    static final Method<String, String> ECHO = Method.of("echo", Codecs.STRING, Codecs.STRING);
    static final Method<String, String> BLOCKING_ECHO = Method.of("blockingEcho", Codecs.STRING, Codecs.STRING);
    static final Method<MemorySegment, MemorySegment> RAW = Method.raw("raw");

    record Item(int id, String name, byte[] data, Item next) {
    }

    static final Method<Item, Item> ITEM = Method.of("item", Codecs.record(MethodHandles.lookup(), Item.class),
            Codecs.record(MethodHandles.lookup(), Item.class));
    static final int[] METHOD_IDS = {ECHO.id(), BLOCKING_ECHO.id(), RAW.id(), ITEM.id(), 0, -1, 12345};
    static final int FRAMES = 100_000;

    @Test
    void survivesRandomAndMutatedFrames() throws Exception {
        try (RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(2))).maxFrameLength(64 * 1024)
                .register(ECHO, (ctx, s) -> s)
                .registerBlocking(BLOCKING_ECHO, (ctx, s) -> s)
                .registerRaw(RAW, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength()))
                .register(ITEM, (ctx, i) -> i)
                .start()) {
            int baselineChunks;
            try (RpcClient warm = RpcClient.connect(server.address())) {
                assertEquals("warm", warm.call(ECHO, "warm"));
            }
            TestSupport.await("idle", Duration.ofSeconds(5), () -> server.metrics().connectionsActive() == 0);
            baselineChunks = server.bufferPool().chunksInUse();

            SplittableRandom rnd = new SplittableRandom(0xF0221);
            AtomicLong received = new AtomicLong();
            long sent = 0;
            long connections = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while (sent < FRAMES && System.nanoTime() < deadline) {
                connections++;
                try (SocketChannel ch = SocketChannel.open(server.address())) {
                    ch.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
                    Thread drain = Thread.ofVirtual().start(() -> drain(ch, received));
                    // A burst of frames on this connection, written in random pieces (frames split
                    // across reads); a third of the connections end with a damaged frame.
                    int burst = 1 + rnd.nextInt(800);
                    int corruptAt = rnd.nextInt(3) == 0 ? rnd.nextInt(burst) : -1;
                    ByteBuffer out = ByteBuffer.allocate(256 * 1024).order(ByteOrder.LITTLE_ENDIAN);
                    boolean open = true;
                    for (int i = 0; i < burst && open; i++) {
                        byte[] frame = i == corruptAt ? damagedFrame(rnd) : mutatedFrame(rnd);
                        if (out.remaining() < frame.length || rnd.nextInt(50) == 0) {
                            open = flush(ch, out, rnd);
                        }
                        out.put(frame);
                        sent++;
                        if (i == corruptAt) {
                            break;
                        }
                    }
                    if (open) {
                        flush(ch, out, rnd);
                    }
                    ch.shutdownOutput();
                    drain.join(5000);
                } catch (IOException e) {
                    // the server closed on us mid-write: expected for corrupt frames
                }
            }
            assertTrue(sent >= FRAMES, "sent only " + sent + " frames");
            TestSupport.await("fuzz connections closed", Duration.ofSeconds(10),
                    () -> server.metrics().connectionsActive() == 0);
            long dispatched = server.metrics().calls();
            assertTrue(dispatched >= FRAMES * 8 / 10, "server dispatched only " + dispatched + " of " + sent + " frames");

            // Still serving, correctly, on every path.
            try (RpcClient c = RpcClient.connect(server.address())) {
                for (int i = 0; i < 50; i++) {
                    assertEquals("after fuzz " + i, c.call(ECHO, "after fuzz " + i));
                    assertEquals("blocking " + i, c.call(BLOCKING_ECHO, "blocking " + i));
                    Item item = new Item(i, "n" + i, new byte[]{(byte) i}, new Item(-i, null, null, null));
                    assertEquals(item.name(), c.call(ITEM, item).name());
                    MemorySegment p = MemorySegment.ofArray(new byte[]{1, 2, (byte) i});
                    assertArrayEquals(p.toArray(ValueLayout.JAVA_BYTE), c.call(RAW, p).toArray(ValueLayout.JAVA_BYTE));
                }
            }
            TestSupport.await("all fuzz connections closed", Duration.ofSeconds(10),
                    () -> server.metrics().connectionsActive() == 0);
            TestSupport.await("no leaked buffers", Duration.ofSeconds(5),
                    () -> server.bufferPool().chunksInUse() == baselineChunks && server.bufferPool().largeBuffersInUse() == 0);
            assertTrue(server.metrics().protocolErrors() > 0, "some frames must have been rejected");
            assertTrue(server.metrics().errors() > 0, "some calls must have got error responses");
            assertTrue(received.get() > 0, "some responses must have come back");
            System.out.printf("fuzz: %d frames on %d connections, %d dispatched, %d protocol errors, %d error responses,"
                            + " %d bytes back%n", sent, connections, dispatched, server.metrics().protocolErrors(),
                    server.metrics().errors(), received.get());
        }
    }

    /** Writes {@code out} in random-size pieces, so frames arrive split across reads. */
    private static boolean flush(SocketChannel ch, ByteBuffer out, SplittableRandom rnd) {
        out.flip();
        try {
            while (out.hasRemaining()) {
                int end = Math.min(out.limit(), out.position() + 1 + rnd.nextInt(4096));
                ByteBuffer piece = out.duplicate().limit(end);
                while (piece.hasRemaining()) {
                    ch.write(piece);
                }
                out.position(end);
            }
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            out.clear();
        }
    }

    private static void drain(SocketChannel ch, AtomicLong received) {
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        try {
            int n;
            while ((n = ch.read(in)) >= 0) {
                received.addAndGet(n);
                in.clear();
            }
        } catch (IOException e) {
            // reset by the server: fine
        }
    }

    /** A well-framed request: known or unknown method, a payload its codec may or may not accept. */
    static byte[] mutatedFrame(SplittableRandom rnd) {
        int kind = rnd.nextInt(100);
        int methodId = METHOD_IDS[rnd.nextInt(METHOD_IDS.length)];
        byte[] payload = new byte[rnd.nextInt(200)];
        byte[] attachment = new byte[rnd.nextInt(10) == 0 ? rnd.nextInt(64) : 0];
        if (kind < 30) {
            // well-formed request with a payload the codec may or may not accept
            payload = ("fuzz" + rnd.nextInt()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        } else {
            for (int i = 0; i < payload.length; i++) {
                payload[i] = (byte) rnd.nextInt();
            }
        }
        return TestSupport.requestFrame(rnd.nextLong(), methodId, payload, attachment);
    }

    /** A frame with random damage to its header, sometimes truncated too. */
    static byte[] damagedFrame(SplittableRandom rnd) {
        byte[] frame = mutatedFrame(rnd);
        {
            // damage the header: bit flips, a random field, or a random prefix of garbage
            ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
            switch (rnd.nextInt(5)) {
                case 0 -> frame[rnd.nextInt(FrameDescriptor.HEADER_LENGTH)] ^= (byte) (1 << rnd.nextInt(8));
                case 1 -> b.putInt(FrameDescriptor.PAYLOAD_LENGTH_OFFSET, rnd.nextInt());
                case 2 -> b.putInt(FrameDescriptor.ATTACHMENT_LENGTH_OFFSET, rnd.nextInt());
                case 3 -> b.put(FrameDescriptor.TYPE_OFFSET, (byte) rnd.nextInt());
                default -> {
                    for (int i = 0; i < FrameDescriptor.HEADER_LENGTH; i++) {
                        frame[i] = (byte) rnd.nextInt();
                    }
                }
            }
            if (rnd.nextBoolean()) {
                frame = java.util.Arrays.copyOf(frame, rnd.nextInt(frame.length + 1)); // and truncate it
            }
        }
        return frame;
    }
}
