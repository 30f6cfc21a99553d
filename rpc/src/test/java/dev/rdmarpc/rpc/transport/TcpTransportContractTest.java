package dev.rdmarpc.rpc.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.tcp.TcpConfig;
import dev.rdmarpc.rpc.transport.tcp.TcpTransport;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The transport contract, answered by TCP. */
class TcpTransportContractTest extends TransportContractTest {
    @Override
    protected Transport createTransport() {
        return TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(2)));
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress("127.0.0.1", 0);
    }

    /**
     * The send ring starts small and grows (8, 16, ... 256 entries) only when a connection queues more:
     * 200 frames larger than a chunk (an entry each) queued while the I/O thread is busy, the ring's head
     * past 0 (entries wrap), and a held frame among them whose entry moves as the ring grows; all arrive
     * whole and in order, and the echoes (the server's ring grows too) come back.
     */
    @Test
    void framesQueuedWhileTheLoopIsBusyGrowTheSendRing() throws Exception {
        Connection c = connect();
        int chunk = transport.bufferPool().chunkSize();
        CountDownLatch resume = blockLoop(c);
        for (int i = 0; i < 3; i++) { // queued together, written together: the ring's head moves to 2
            send(c, i, new byte[chunk + 1], new byte[0]);
        }
        resume.countDown();
        for (int i = 0; i < 3; i++) {
            assertEquals(i, next(serverEvents, Frame.class).requestId());
        }
        resume = blockLoop(c);
        int frames = 200;
        int held = 3;
        byte[][] payloads = new byte[frames][];
        long token = -1;
        int heldLength = 0;
        MemorySegment heldBuffer = null;
        long heldAt = -1;
        for (int i = 0; i < frames; i++) {
            byte[] p = new byte[chunk + 1 + i];
            for (int j = 0; j < p.length; j++) {
                p[j] = (byte) (i * 31 + j);
            }
            payloads[i] = p;
            if (i != held) {
                send(c, 100 + i, p, new byte[0]);
                continue;
            }
            heldLength = FrameDescriptor.HEADER_LENGTH + p.length;
            long at = c.claim(heldLength);
            assertTrue(at >= 0, "claim failed: " + at);
            MemorySegment buf = c.claimBuffer();
            new FrameHeaderEncoder().wrap(buf, at).type(FrameDescriptor.TYPE_REQUEST).requestId(100 + i).methodId(7)
                    .payloadLength(p.length).attachmentLength(0);
            token = ((ZeroCopySend) c).commitPartial(FrameDescriptor.HEADER_LENGTH); // the payload is still to be written
            assertTrue(token >= 0, "TCP holds a frame");
            heldBuffer = buf;
            heldAt = at;
        }
        resume.countDown();
        Thread.sleep(50); // the I/O thread writes what it may meanwhile: up to the held frame's header, no further
        MemorySegment.copy(payloads[held], 0, heldBuffer, ValueLayout.JAVA_BYTE, heldAt + FrameDescriptor.HEADER_LENGTH,
                payloads[held].length);
        ((ZeroCopySend) c).partialWritten(token, heldLength);
        for (int i = 0; i < frames; i++) {
            Frame f = next(serverEvents, Frame.class);
            assertEquals(100 + i, f.requestId());
            assertArrayEquals(payloads[i], f.payload(), "frame " + i);
        }
        TestWait.until(() -> transport.bufferPool().largeBuffersInUse() == 0);
    }

    /** Keeps {@code c}'s I/O thread busy until the returned latch counts down (at most 10 s). */
    private static CountDownLatch blockLoop(Connection c) throws InterruptedException {
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        c.execute(() -> {
            busy.countDown();
            try {
                resume.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(busy.await(5, TimeUnit.SECONDS));
        return resume;
    }
}
