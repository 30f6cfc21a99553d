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
    private static final int PAYLOAD = 32 * 1024;
    private static final int FRAMES = 64;
    private static final int FRAME = FrameDescriptor.HEADER_LENGTH + PAYLOAD;

    @Test
    void payloadsOfFramesInAChunkAreSentFromItIntact() throws Exception {
        AtomicInteger copied = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        try (TcpTransport server = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)))) {
            int idleChunks = server.bufferPool().chunksInUse();
            ServerEndpoint endpoint = server.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, conn -> new FrameHandler() {
                private final FrameHeaderEncoder enc = new FrameHeaderEncoder();

                @Override
                public void onFrame(Connection c, MemorySegment buf, long off, int len) {
                    long id = FrameHeader.requestId(buf, off);
                    int payload = len - FrameDescriptor.HEADER_LENGTH;
                    long at = ((ZeroCopySend) c).claimFromReceived(len, buf, off + FrameDescriptor.HEADER_LENGTH, payload);
                    if (at == ZeroCopySend.UNSUPPORTED) {
                        copied.incrementAndGet();
                        at = c.claim(len);
                        if (at >= 0) {
                            MemorySegment.copy(buf, off + FrameDescriptor.HEADER_LENGTH, c.claimBuffer(),
                                    at + FrameDescriptor.HEADER_LENGTH, payload);
                        }
                    }
                    if (at < 0) {
                        failed.incrementAndGet();
                        return;
                    }
                    enc.wrap(c.claimBuffer(), at).type(FrameDescriptor.TYPE_RESPONSE).requestId(id).methodId(7)
                            .payloadLength(payload).attachmentLength(0);
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
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        for (int id = 0; id < FRAMES; id++) {
                            ByteBuffer f = frame(id);
                            while (f.hasRemaining()) {
                                ch.write(f);
                            }
                        }
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                });
                ByteBuffer in = ByteBuffer.allocateDirect(FRAME);
                MemorySegment seg = MemorySegment.ofBuffer(in);
                for (int id = 0; id < FRAMES; id++) {
                    in.clear();
                    while (in.hasRemaining()) {
                        if (ch.read(in) < 0) {
                            throw new AssertionError("the server closed after " + id + " echoes");
                        }
                    }
                    assertEquals(id, FrameHeader.requestId(seg, 0), "echoes in order");
                    assertEquals(PAYLOAD, FrameHeader.payloadLength(seg, 0));
                    for (int i = 0; i < PAYLOAD; i++) {
                        if (seg.get(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + i) != (byte) (id * 31 + i)) {
                            throw new AssertionError("echo " + id + " differs at payload byte " + i);
                        }
                    }
                }
                writer.join();
            }
            assertEquals(0, failed.get(), "every claim and write succeeded");
            assertEquals(0, copied.get(), "every payload sent from the chunk it arrived in");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.bufferPool().chunksInUse() > idleChunks && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(server.bufferPool().chunksInUse() <= idleChunks,
                    "every chunk went back: " + server.bufferPool().chunksInUse() + " in use, " + idleChunks + " before");
        }
    }

    private static ByteBuffer frame(int id) {
        MemorySegment f = MemorySegment.ofArray(new byte[FRAME]);
        new FrameHeaderEncoder().wrap(f, 0).type(FrameDescriptor.TYPE_REQUEST).requestId(id).methodId(7)
                .payloadLength(PAYLOAD).attachmentLength(0);
        for (int i = 0; i < PAYLOAD; i++) {
            f.set(ValueLayout.JAVA_BYTE, FrameDescriptor.HEADER_LENGTH + i, (byte) (id * 31 + i));
        }
        return f.asByteBuffer();
    }
}
