package dev.rdmarpc.rpc.transport.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link TcpReceiver} reads pipelined frames into its 64 KiB chunk: 32 KiB frames (two of which do
 * not fit a chunk) are not copied to the chunk's start one after the other, and small frames are still
 * read many to a read.
 */
@Timeout(30)
class TcpReceiverReadSizeTest {
    private static final int CHUNK = BufferPool.Config.DEFAULT_CHUNK_SIZE;

    /**
     * Read on to the chunk's end, each 32 KiB frame's last 32,736 bytes arrive at the chunk's far half
     * and are copied to its start: about 2 MiB copied for 64 frames. Read to each frame's end and the
     * next header, only the headers are (and, once, what the first read brought of the second frame,
     * before any header was known).
     */
    @Test
    void framesOf32KiBAreNotCopiedWithinTheChunk() throws Exception {
        Counts c = send(32 * 1024, 64);
        assertTrue(c.compacted <= CHUNK / 2 + 64L * FrameDescriptor.HEADER_LENGTH,
                "at most a header copied per frame: " + c.compacted + " bytes copied, " + c.reads + " reads");
        assertTrue(c.reads <= 3L * 64, c.reads + " reads for 64 frames");
    }

    /** 4 KiB frames are read to the chunk's end, many to a read (not one frame per read). */
    @Test
    void framesOf4KiBAreStillReadManyToARead() throws Exception {
        Counts c = send(4 * 1024, 256);
        assertTrue(c.reads < 256 / 2, c.reads + " reads for 256 frames of 4 KiB");
    }

    private record Counts(long compacted, long reads) {
    }

    /** Sends {@code frames} frames of {@code payload} bytes in one go; returns the server connection's counts after the last. */
    private static Counts send(int payload, int frames) throws Exception {
        assertTrue(2 * (FrameDescriptor.HEADER_LENGTH + 32 * 1024) > CHUNK, "two 32 KiB frames overfill a chunk");
        AtomicInteger seen = new AtomicInteger();
        AtomicInteger wrong = new AtomicInteger();
        AtomicLong compacted = new AtomicLong(-1);
        AtomicLong reads = new AtomicLong(-1);
        try (TcpTransport server = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)))) {
            ServerEndpoint endpoint = server.listen(new InetSocketAddress("127.0.0.1", 0), 1 << 20, conn -> new FrameHandler() {
                @Override
                public void onFrame(Connection conn, MemorySegment buf, long off, int len) {
                    int id = (int) FrameHeader.requestId(buf, off);
                    if (id != seen.get() || len != FrameDescriptor.HEADER_LENGTH + payload || !intact(buf, off, id, payload)) {
                        wrong.incrementAndGet();
                    }
                    if (seen.incrementAndGet() == frames) {
                        TcpConnection t = (TcpConnection) conn;
                        compacted.set(t.receiveCompactedBytes());
                        reads.set(t.receiveReads());
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
                ByteBuffer all = ByteBuffer.allocateDirect(frames * (FrameDescriptor.HEADER_LENGTH + payload));
                for (int id = 0; id < frames; id++) {
                    all.put(frame(id, payload));
                }
                all.flip();
                while (all.hasRemaining()) {
                    ch.write(all);
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (reads.get() < 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
            }
        }
        assertEquals(frames, seen.get(), "every frame handled");
        assertEquals(0, wrong.get(), "every frame handled in order, whole");
        return new Counts(compacted.get(), reads.get());
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

    private static boolean intact(MemorySegment buf, long off, int id, int payload) {
        for (int i = 0; i < payload; i++) {
            if (buf.get(ValueLayout.JAVA_BYTE, off + FrameDescriptor.HEADER_LENGTH + i) != (byte) (id * 31 + i)) {
                return false;
            }
        }
        return true;
    }
}
