package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RegisteredMemory#close(Duration)} while a transfer uses the memory (issue 47, point 4): it
 * waits for the transfer at most its time, then closes the connection that carries it (saying why),
 * and returns with the memory deregistered; other connections go on.
 */
@RdmaTest
@Timeout(120)
class RegisteredMemoryCloseRdmaTest {
    private static final int MAX_FRAME = 8 << 20;
    private static final int TAIL = 1 << 20;

    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD));
    }

    /** Records frames and the close. */
    private static class Recorder implements FrameHandler {
        final AtomicInteger frames = new AtomicInteger();
        final CompletableFuture<Throwable> closed = new CompletableFuture<>();

        @Override
        public void onFrame(Connection c, MemorySegment buffer, long offset, int length) {
            frames.incrementAndGet();
        }

        @Override
        public void onTick(Connection c, long nowNanos) {
        }

        @Override
        public void onClose(Connection c, Throwable cause) {
            closed.complete(cause);
        }
    }

    /** Sends a request frame of {@code payload} bytes of the claim, then {@code tail} unless null (sent in place). */
    private static void send(Connection c, int payload, MemorySegment tail) {
        int attachment = tail == null ? 0 : (int) tail.byteSize();
        int frameLength = FrameDescriptor.HEADER_LENGTH + payload + attachment;
        long at = tail == null ? c.claim(frameLength) : ((ZeroCopySend) c).claimWithTail(frameLength, tail, Long.MAX_VALUE);
        assertTrue(at >= 0, "claim: " + at);
        new FrameHeaderEncoder().wrap(c.claimBuffer(), at).type(FrameDescriptor.TYPE_REQUEST).requestId(1).methodId(7)
                .payloadLength(payload).attachmentLength(attachment);
        c.commit();
    }

    /**
     * The server stops reading the first connection after its first frame (a peer that is alive and
     * answers pings, but never reads): a 1 MiB attachment in registered memory sent next goes by
     * rendezvous and waits to be read, so the memory is in use. {@code close(1 s)} waits 1 s, then
     * closes that connection, whose handler is told why, and returns with no transfer left; a second
     * connection of the same transport still delivers.
     */
    @Test
    void closeWaitsItsTimeThenClosesTheConnectionThatHoldsTheMemory() throws Exception {
        Map<ResourceKind, Long> before = VerbsResources.snapshot();
        try (RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config());
             Arena arena = Arena.ofShared()) {
            AtomicInteger accepted = new AtomicInteger();
            Recorder server2 = new Recorder();
            ServerEndpoint endpoint = serverT.listen(RdmaTestEnv.serverBind(), MAX_FRAME, c -> {
                if (accepted.getAndIncrement() > 0) {
                    return server2;
                }
                return new Recorder() {
                    @Override
                    public void onFrame(Connection conn, MemorySegment buffer, long offset, int length) {
                        super.onFrame(conn, buffer, offset, length);
                        conn.setReadEnabled(false);
                    }
                };
            });
            RegisteredMemory mem = clientT.register(arena.allocate(2 * TAIL, 4096));
            Recorder client1 = new Recorder();
            Connection c1 = clientT.connect(endpoint.address(), MAX_FRAME, client1, Duration.ofSeconds(60));
            send(c1, 16, null);
            send(c1, 16, mem.segment().asSlice(4096, TAIL));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (clientT.metrics().rendezvousSent() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(1, clientT.metrics().rendezvousSent(), "the attachment went by rendezvous: " + clientT.metrics());
            Thread.sleep(300);
            assertEquals(1, mem.transfersInFlight(), "the frame waits to be read");
            assertTrue(c1.isOpen());

            Recorder client2 = new Recorder();
            Connection c2 = clientT.connect(endpoint.address(), MAX_FRAME, client2, Duration.ofSeconds(60));
            assertThrows(IllegalArgumentException.class, () -> mem.close(Duration.ZERO));
            long t0 = System.nanoTime();
            mem.close(Duration.ofSeconds(1));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("close(1 s) returned after " + ms + " ms; " + clientT.metrics());
            assertTrue(ms >= 950 && ms < 20_000, "close took " + ms + " ms");
            assertEquals(0, mem.transfersInFlight());
            Throwable why = client1.closed.get(10, TimeUnit.SECONDS);
            assertTrue(String.valueOf(why).contains("registered memory closed while 1 transfers still used it"),
                    String.valueOf(why));
            assertFalse(c1.isOpen());
            mem.close(); // idempotent

            assertTrue(c2.isOpen(), "a connection that did not use the memory stays open");
            send(c2, 100, null);
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server2.frames.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(1, server2.frames.get(), "the other connection still delivers");
            c2.close(null);
            endpoint.close();
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }
}
