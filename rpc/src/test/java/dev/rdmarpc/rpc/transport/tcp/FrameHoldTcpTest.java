package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.FrameHold;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.frame.FrameHolds;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Frames kept past their handler ({@link Connection#holdFrame}): at most {@link FrameHolds#MAX_HELD} at a
 * time; their bytes stay as they arrived while the connection reads on through many more chunks' worth of
 * frames (the held chunk is never compacted or read into from its start); released from another thread,
 * every chunk goes back to the pool.
 */
@Timeout(30)
class FrameHoldTcpTest {
    private static final int PAYLOAD = 3000;
    private static final int FRAMES = 120; // about 5.5 chunks of 64 KiB

    private record Held(MemorySegment buf, long off, int id, FrameHold hold) {
    }

    @Test
    void heldFramesStayIntactWhileTheConnectionReadsOnAndTheirChunksGoBack() throws Exception {
        List<Held> held = new CopyOnWriteArrayList<>();
        AtomicInteger seen = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger wrong = new AtomicInteger();
        try (TcpTransport server = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)))) {
            int idleChunks = server.bufferPool().chunksInUse();
            ServerEndpoint endpoint = server.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, c -> new FrameHandler() {
                @Override
                public void onFrame(Connection conn, MemorySegment buf, long off, int len) {
                    int id = (int) FrameHeader.requestId(buf, off);
                    if (id != seen.getAndIncrement() || !intact(buf, off, id)) {
                        wrong.incrementAndGet();
                    }
                    // keep every other frame, so that held and handled frames share chunks
                    if (id % 2 == 0) {
                        FrameHold h = conn.holdFrame();
                        if (h == null) {
                            refused.incrementAndGet();
                        } else {
                            held.add(new Held(buf, off, id, h));
                        }
                    }
                }

                @Override
                public void onTick(Connection conn, long now) {
                }

                @Override
                public void onClose(Connection conn, Throwable cause) {
                }
            });
            try (SocketChannel ch = SocketChannel.open(endpoint.address())) {
                ByteBuffer all = ByteBuffer.allocate(FRAMES * (FrameDescriptor.HEADER_LENGTH + PAYLOAD));
                for (int id = 0; id < FRAMES; id++) {
                    all.put(frame(id));
                }
                all.flip();
                while (all.hasRemaining()) {
                    ch.write(all);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (seen.get() < FRAMES && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertEquals(FRAMES, seen.get(), "every frame handled");
                assertEquals(0, wrong.get(), "every frame handled in order, whole");
                assertEquals(FrameHolds.MAX_HELD, held.size(), "held up to the limit");
                assertEquals(FRAMES / 2 - FrameHolds.MAX_HELD, refused.get(), "refused past it");
                for (Held h : held) {
                    assertTrue(intact(h.buf(), h.off(), h.id()), "held frame " + h.id() + " unchanged");
                }
                assertTrue(server.bufferPool().chunksInUse() > idleChunks + 1, "held chunks stay out of the pool");
                for (Held h : held) {
                    h.hold().release(); // from this thread: the I/O thread gives the chunk back
                }
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (server.bufferPool().chunksInUse() > idleChunks + 1 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertTrue(server.bufferPool().chunksInUse() <= idleChunks + 1,
                        "held chunks went back: " + server.bufferPool().chunksInUse() + " in use, " + idleChunks + " idle");
            }
        }
    }

    private static ByteBuffer frame(int id) {
        MemorySegment f = MemorySegment.ofArray(new byte[FrameDescriptor.HEADER_LENGTH + PAYLOAD]);
        new FrameHeaderEncoder().wrap(f, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(id).methodId(7)
                .payloadLength(PAYLOAD).attachmentLength(0);
        for (int i = 0; i < PAYLOAD; i++) {
            f.set(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + i, (byte) (id * 31 + i));
        }
        return f.asByteBuffer();
    }

    private static boolean intact(MemorySegment buf, long off, int id) {
        if (FrameHeader.requestId(buf, off) != id) {
            return false;
        }
        for (int i = 0; i < PAYLOAD; i++) {
            if (buf.get(ValueLayout.JAVA_BYTE, off + FrameDescriptor.HEADER_LENGTH + i) != (byte) (id * 31 + i)) {
                return false;
            }
        }
        return true;
    }
}
