package dev.rdmarpc.rpc.transport.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An echo of frames that fit a receive chunk, sent with {@link ZeroCopySend#claimFromReceived}: the
 * payload goes back from the chunk it arrived in (no copy), the connection reads on in fresh chunks
 * without writing over a chunk whose bytes are still to be sent, and every chunk goes back to the pool.
 */
@Timeout(30)
class TcpEchoFromChunkTest {
    private static final int FRAMES = 64;

    /** 32 KiB: one frame to a chunk, every payload sent from its chunk. */
    @Test
    void payloadsOfFramesInAChunkAreSentFromItIntact() throws Exception {
        Echoes e = echo(32 * 1024);
        assertEquals(0, e.copied(), "every payload sent from the chunk it arrived in");
    }

    /**
     * 16 KiB: three frames to a chunk. One payload at a time is sent from a chunk (two would share its
     * view, and a gathering write takes a view once); the others are copied; every echo is intact.
     */
    @Test
    void oneSmallerPayloadAtATimeIsSentFromAChunk() throws Exception {
        Echoes e = echo(16 * 1024);
        assertTrue(e.sharedChunks() > 0, "frames arrived several to a chunk");
        assertEquals(0, e.secondInPlace(), "a second payload sent from a chunk one already sends from");
        assertTrue(e.copied() > 0, e.copied() + " of " + FRAMES + " payloads copied");
    }

    /**
     * @param copied        payloads copied (claimFromReceived unsupported)
     * @param sharedChunks  frames handed in the same chunk as the frame before them
     * @param secondInPlace payloads sent from a chunk from which an earlier frame's payload was sent
     */
    private record Echoes(int copied, int sharedChunks, int secondInPlace) {
    }

    /** Echoes {@link #FRAMES} frames of {@code payload} bytes, written at once, checking each. */
    private static Echoes echo(int payload) throws Exception {
        int frameLength = FrameDescriptor.HEADER_LENGTH + payload;
        AtomicInteger copied = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger shared = new AtomicInteger();
        AtomicInteger second = new AtomicInteger();
        try (TcpTransport server = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)))) {
            int idleChunks = server.bufferPool().chunksInUse();
            ServerEndpoint endpoint = server.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, conn -> new FrameHandler() {
                private final FrameHeaderEncoder enc = new FrameHeaderEncoder();
                private long lastChunk;
                private boolean sentFromLast;

                @Override
                public void onFrame(Connection c, MemorySegment buf, long off, int len) {
                    long id = FrameHeader.requestId(buf, off);
                    int n = len - FrameDescriptor.HEADER_LENGTH;
                    long at = ((ZeroCopySend) c).claimFromReceived(len, buf, off + FrameDescriptor.HEADER_LENGTH, n);
                    boolean sameChunk = buf.address() == lastChunk;
                    if (sameChunk) {
                        shared.incrementAndGet();
                    } else {
                        sentFromLast = false;
                    }
                    lastChunk = buf.address();
                    if (at >= 0) {
                        if (sentFromLast) {
                            second.incrementAndGet();
                        }
                        sentFromLast = true;
                    }
                    if (at == ZeroCopySend.UNSUPPORTED) {
                        copied.incrementAndGet();
                        at = c.claim(len);
                        if (at >= 0) {
                            MemorySegment.copy(buf, off + FrameDescriptor.HEADER_LENGTH, c.claimBuffer(),
                                    at + FrameDescriptor.HEADER_LENGTH, n);
                        }
                    }
                    if (at < 0) {
                        failed.incrementAndGet();
                        return;
                    }
                    enc.wrap(c.claimBuffer(), at).type(FrameDescriptor.TYPE_RESPONSE).requestId(id).methodId(7)
                            .payloadLength(n).attachmentLength(0);
                    c.commit();
                }

                @Override
                public void onTick(Connection c, long now) {
                }

                @Override
                public void onClose(Connection c, Throwable cause) {
                }
            });
            try (SocketChannel ch = SocketChannel.open(endpoint.address())) {
                ByteBuffer all = ByteBuffer.allocateDirect(FRAMES * frameLength);
                for (int id = 0; id < FRAMES; id++) {
                    all.put(frame(id, payload));
                }
                all.flip();
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        while (all.hasRemaining()) {
                            ch.write(all);
                        }
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                });
                ByteBuffer in = ByteBuffer.allocateDirect(frameLength);
                MemorySegment seg = MemorySegment.ofBuffer(in);
                for (int id = 0; id < FRAMES; id++) {
                    in.clear();
                    while (in.hasRemaining()) {
                        if (ch.read(in) < 0) {
                            throw new AssertionError("the server closed after " + id + " echoes");
                        }
                    }
                    assertEquals(id, FrameHeader.requestId(seg, 0), "echoes in order");
                    assertEquals(payload, FrameHeader.payloadLength(seg, 0));
                    for (int i = 0; i < payload; i++) {
                        if (seg.get(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + i) != (byte) (id * 31 + i)) {
                            throw new AssertionError("echo " + id + " differs at payload byte " + i);
                        }
                    }
                }
                writer.join();
            }
            assertEquals(0, failed.get(), "every claim and write succeeded");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.bufferPool().chunksInUse() > idleChunks && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(server.bufferPool().chunksInUse() <= idleChunks,
                    "every chunk went back: " + server.bufferPool().chunksInUse() + " in use, " + idleChunks + " before");
        }
        return new Echoes(copied.get(), shared.get(), second.get());
    }

    private static ByteBuffer frame(int id, int payload) {
        MemorySegment f = MemorySegment.ofArray(new byte[FrameDescriptor.HEADER_LENGTH + payload]);
        new FrameHeaderEncoder().wrap(f, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(id).methodId(7)
                .payloadLength(payload).attachmentLength(0);
        for (int i = 0; i < payload; i++) {
            f.set(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + i, (byte) (id * 31 + i));
        }
        return f.asByteBuffer();
    }
}
