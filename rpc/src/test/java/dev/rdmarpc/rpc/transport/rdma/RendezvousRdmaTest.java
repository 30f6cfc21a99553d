package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.ATTACHMENT_HASH;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.ECHO;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.echoServer;
import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.hash;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.ResourceKind;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ServerEndpoint;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Rendezvous frames over the Soft-RoCE link, for real: frames of at least
 * {@link SendSettings#rendezvousThreshold} are read by their receiver with RDMA READ under a key that
 * covers them alone (on Soft-RoCE a region registered per frame, elsewhere a memory window bound per
 * frame), and nothing is copied to reassemble them; smaller ones still go as SENDs.
 * What can fail here: the bytes (every echo is compared), the exact counts of frames read by rendezvous
 * on each side, the bytes copied by reassembly, the keys made, and the verbs resources after close.
 */
@RdmaTest
@Timeout(600)
class RendezvousRdmaTest {
    private static final int THRESHOLD = RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD;
    /** A raw echo's request and response frames: the header, then the payload. */
    private static final int OVERHEAD = FrameDescriptor.HEADER_LENGTH;

    private static RdmaConfig config(int threshold) {
        return RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(threshold));
    }

    private static RpcClient client(RpcServer server, RdmaTransport t) throws Exception {
        return RpcClient.builder().address(server.address()).transport(t).defaultTimeout(Duration.ofSeconds(60)).connect();
    }

    private static MemorySegment pattern(Arena arena, int size, int seed) {
        MemorySegment s = arena.allocate(Math.max(size, 1));
        for (long i = 0; i + 8 <= size; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        for (long i = size & ~7L; i < size; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i ^ seed));
        }
        return s.asSlice(0, size);
    }

    private static void assertEcho(RpcClient client, MemorySegment payload) {
        MemorySegment back = client.call(ECHO, payload);
        assertEquals(payload.byteSize(), back.byteSize(), "echo length");
        assertEquals(-1, back.mismatch(payload), "echo of " + payload.byteSize() + " bytes differs");
    }

    @Test
    void framesAroundTheThresholdArriveIntactAndOnlyThoseAtOrAboveItAreRead() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(THRESHOLD));
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = client(server, clientT);
             Arena arena = Arena.ofShared()) {
            assertEcho(client, pattern(arena, 100, 1)); // connected and warm
            int[] payloads = {300 * 1024, THRESHOLD - OVERHEAD - 1, THRESHOLD - OVERHEAD, THRESHOLD - OVERHEAD + 1,
                1 << 20, (8 << 20) + 3};
            for (int size : payloads) {
                int frame = size + OVERHEAD;
                boolean rendezvous = frame >= THRESHOLD;
                long sent0 = clientT.metrics().rendezvousSent();
                long read0 = serverT.metrics().rendezvousRead();
                long serverSent0 = serverT.metrics().rendezvousSent();
                long clientRead0 = clientT.metrics().rendezvousRead();
                long serverCopied0 = serverT.metrics().reassemblyCopiedBytes();
                long clientCopied0 = clientT.metrics().reassemblyCopiedBytes();
                assertEcho(client, pattern(arena, size, size));
                int n = rendezvous ? 1 : 0;
                String what = "a frame of " + frame + " bytes (threshold " + THRESHOLD + ")";
                assertEquals(n, clientT.metrics().rendezvousSent() - sent0, "requests sent by rendezvous, " + what);
                assertEquals(n, serverT.metrics().rendezvousRead() - read0, "requests read by rendezvous, " + what);
                assertEquals(n, serverT.metrics().rendezvousSent() - serverSent0, "responses sent by rendezvous, " + what);
                assertEquals(n, clientT.metrics().rendezvousRead() - clientRead0, "responses read by rendezvous, " + what);
                long serverCopied = serverT.metrics().reassemblyCopiedBytes() - serverCopied0;
                long clientCopied = clientT.metrics().reassemblyCopiedBytes() - clientCopied0;
                if (rendezvous) {
                    assertEquals(0, serverCopied, "bytes the server copied to reassemble " + what);
                    assertEquals(0, clientCopied, "bytes the client copied to reassemble " + what);
                } else {
                    // split into chunk-sized SENDs and copied into a reassembly buffer, at least once each
                    assertTrue(serverCopied >= frame, "server copied " + serverCopied + " of " + what);
                    assertTrue(clientCopied >= frame, "client copied " + clientCopied + " of " + what);
                }
            }
            assertEquals(0, clientT.metrics().completionErrors(), clientT.metrics().toString());
            assertEquals(0, serverT.metrics().completionErrors(), serverT.metrics().toString());
        }
    }

    @Test
    void aRegisteredAttachmentIsReadStraightFromTheCallersMemory() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(THRESHOLD));
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            MemorySegment blob = pattern(arena, 6 << 20, 7);
            try (RegisteredMemory reg = clientT.register(blob); RpcClient client = client(server, clientT)) {
                Method<MemorySegment, Long> hashCall = Method.of(ATTACHMENT_HASH.name(), Codecs.SEGMENT, Codecs.LONG);
                for (int size : new int[]{THRESHOLD, 3 << 20}) {
                    MemorySegment part = reg.segment().asSlice(4096 + size % 4096, size);
                    long read0 = serverT.metrics().rendezvousRead();
                    long copied0 = serverT.metrics().reassemblyCopiedBytes();
                    long zeroCopy0 = clientT.metrics().zeroCopyBytes();
                    long h = client.call(hashCall, pattern(arena, 10, 3), CallOptions.DEFAULT.withAttachment(Attachment.of(part)));
                    assertEquals(hash(part), h, "an attachment of " + size + " bytes arrived intact");
                    assertEquals(1, serverT.metrics().rendezvousRead() - read0, "read by rendezvous, in two parts");
                    assertEquals(0, serverT.metrics().reassemblyCopiedBytes() - copied0, "nothing copied to reassemble");
                    assertEquals(size, clientT.metrics().zeroCopyBytes() - zeroCopy0, "the attachment was not copied to send");
                }
            }
        }
    }

    @Test
    void manyConnectionsReadAtOnce() throws Exception {
        int connections = 6;
        int perConnection = 4;
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(THRESHOLD));
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            List<RpcClient> clients = new ArrayList<>();
            try {
                for (int c = 0; c < connections; c++) {
                    clients.add(client(server, clientT));
                }
                for (int round = 0; round < 3; round++) {
                    List<CompletableFuture<MemorySegment>> calls = new ArrayList<>();
                    List<MemorySegment> sent = new ArrayList<>();
                    for (int c = 0; c < connections; c++) {
                        for (int k = 0; k < perConnection; k++) {
                            MemorySegment p = pattern(arena, (1 << 20) + 4096 * k + c, round * 100 + c * 10 + k);
                            sent.add(p);
                            calls.add(clients.get(c).callAsync(ECHO, p));
                        }
                    }
                    for (int i = 0; i < calls.size(); i++) {
                        MemorySegment back = calls.get(i).get(120, TimeUnit.SECONDS);
                        assertEquals(-1, back.mismatch(sent.get(i)), "echo " + i + " of round " + round);
                    }
                }
                long calls = 3L * connections * perConnection;
                assertEquals(calls, serverT.metrics().rendezvousRead(), serverT.metrics().toString());
                assertEquals(calls, clientT.metrics().rendezvousRead(), clientT.metrics().toString());
                assertEquals(0, serverT.metrics().reassemblyCopiedBytes(), serverT.metrics().toString());
                assertEquals(0, clientT.metrics().reassemblyCopiedBytes(), clientT.metrics().toString());
            } finally {
                for (RpcClient c : clients) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aSideThatDisablesRendezvousGetsAndSendsOnlySplitFrames() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(0));
             RpcServer server = echoServer().transport(serverT).start();
             RpcClient client = client(server, clientT);
             Arena arena = Arena.ofShared()) {
            assertEcho(client, pattern(arena, 2 << 20, 5));
            assertEquals(0, clientT.metrics().rendezvousSent());
            assertEquals(0, serverT.metrics().rendezvousSent(), "the client did not announce rendezvous");
            assertTrue(serverT.metrics().reassemblyCopiedBytes() >= 2 << 20);
            assertTrue(clientT.metrics().reassemblyCopiedBytes() >= 2 << 20);
        }
    }

    /**
     * Calls one at a time, then eight at once, on one connection: on Soft-RoCE frames that find the
     * connection idle go through windows (with calls one at a time it goes idle between them), the others get
     * regions of their own (both kinds released in the order sent); every window and region is given
     * back at close.
     */
    @Test
    void everyKeyAndBufferIsGivenBackAfterClose() throws Exception {
        Map<ResourceKind, Long> before = VerbsResources.snapshot();
        long windows0 = VerbsResources.created(ResourceKind.MEMORY_WINDOW);
        int sequential = 20;
        int concurrent = 8;
        int rounds = 3;
        boolean registerWhenBusy;
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(THRESHOLD));
             RpcServer server = echoServer().transport(serverT).start();
             Arena arena = Arena.ofShared()) {
            try (RpcClient client = client(server, clientT)) {
                registerWhenBusy = clientT.devices().opened().getFirst().bindsRepeatedByRetransmission;
                assertTrue(registerWhenBusy || !RdmaTestEnv.inVm(), "the VM's devices are Soft-RoCE");
                for (int i = 0; i < sequential; i++) {
                    assertEcho(client, pattern(arena, (1 << 20) + i, i));
                }
                for (int round = 0; round < rounds; round++) {
                    List<CompletableFuture<MemorySegment>> calls = new ArrayList<>();
                    List<MemorySegment> sent = new ArrayList<>();
                    for (int k = 0; k < concurrent; k++) {
                        MemorySegment p = pattern(arena, (1 << 20) + 4096 * k, round * 100 + k);
                        sent.add(p);
                        calls.add(client.callAsync(ECHO, p));
                    }
                    for (int i = 0; i < calls.size(); i++) {
                        assertEquals(-1, calls.get(i).get(120, TimeUnit.SECONDS).mismatch(sent.get(i)),
                                "echo " + i + " of round " + round);
                    }
                }
            }
            long frames = 2L * (sequential + rounds * concurrent);
            assertEquals(frames, clientT.metrics().rendezvousRead() + serverT.metrics().rendezvousRead());
            assertEquals(frames, clientT.metrics().rendezvousSent() + serverT.metrics().rendezvousSent());
            long registrations = clientT.metrics().rendezvousRegistrations() + serverT.metrics().rendezvousRegistrations();
            long windows = VerbsResources.created(ResourceKind.MEMORY_WINDOW) - windows0;
            assertTrue(windows >= 2L * Rendezvous.SLOTS * Rendezvous.MAX_PARTS, "both ends allocated their windows");
            String metrics = "client " + clientT.metrics() + ", server " + serverT.metrics();
            if (registerWhenBusy) {
                // Soft-RoCE: frames that found the connection busy got regions of their own (each frame
                // one part), and those that found it idle windows
                assertTrue(registrations > 0, "no frame got a region of its own: " + metrics);
                assertTrue(registrations < frames, "no frame went through a window: " + metrics);
            } else {
                assertEquals(0, registrations);
            }
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }

    /**
     * Rendezvous frames keep their order and wait while reading is disabled: the client sends large
     * frames (rendezvous) with small ones (SENDs) among them at once; the server disables reading at the
     * first. For a second nothing more reaches the handler; once reading is enabled again (from another
     * thread) every frame arrives, in the order sent, intact.
     */
    @Test
    void framesKeepTheirOrderAndWaitWhileReadingIsDisabled() throws Exception {
        int large = THRESHOLD + 12_345;
        int[] sizes = {3 << 20, large + 1, 100, large + 2, large + 3, large + 4, 200, large + 5};
        List<long[]> got = java.util.Collections.synchronizedList(new ArrayList<>()); // request id, length, hash
        CompletableFuture<Connection> first = new CompletableFuture<>();
        try (RdmaTransport serverT = RdmaTransport.create(config(THRESHOLD));
             RdmaTransport clientT = RdmaTransport.create(config(THRESHOLD))) {
            ServerEndpoint endpoint = serverT.listen(RdmaTestEnv.serverBind(), 8 << 20, c -> new FrameHandler() {
                @Override
                public void onFrame(Connection conn, MemorySegment buf, long off, int len) {
                    int plen = FrameHeader.payloadLength(buf, off);
                    got.add(new long[]{FrameHeader.requestId(buf, off), plen,
                            hash(buf.asSlice(off + FrameDescriptor.HEADER_LENGTH, plen))});
                    if (got.size() == 1) {
                        conn.setReadEnabled(false);
                        first.complete(conn);
                    }
                }

                @Override
                public void onTick(Connection conn, long now) {
                }

                @Override
                public void onClose(Connection conn, Throwable cause) {
                }
            });
            Connection client = clientT.connect(endpoint.address(), 8 << 20, new FrameHandler() {
                @Override
                public void onFrame(Connection conn, MemorySegment buf, long off, int len) {
                }

                @Override
                public void onTick(Connection conn, long now) {
                }

                @Override
                public void onClose(Connection conn, Throwable cause) {
                }
            }, Duration.ofSeconds(60));
            long[] hashes = new long[sizes.length];
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment[] payloads = new MemorySegment[sizes.length];
                for (int i = 0; i < sizes.length; i++) {
                    payloads[i] = pattern(arena, sizes[i], i); // all made first: the frames go out at once
                    hashes[i] = hash(payloads[i]);
                }
                for (int i = 0; i < sizes.length; i++) {
                    MemorySegment p = payloads[i];
                    long at = client.claim(FrameDescriptor.HEADER_LENGTH + sizes[i]);
                    assertTrue(at >= 0, "claim of frame " + i + ": " + at);
                    MemorySegment buf = client.claimBuffer();
                    new FrameHeaderEncoder().wrap(buf, at).type(FrameDescriptor.TYPE_REQUEST).requestId(i).methodId(7)
                            .payloadLength(sizes[i]).attachmentLength(0);
                    MemorySegment.copy(p, 0, buf, at + FrameDescriptor.HEADER_LENGTH, sizes[i]);
                    client.commit();
                }
            }
            Connection server = first.get(60, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Thread.sleep(1000); // the other frames arrive meanwhile, and wait
            assertEquals(1, got.size(), "frames handed over while reading was disabled");
            server.setReadEnabled(true);
            while (got.size() < sizes.length && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(sizes.length, got.size(), "frames after reading was enabled again: " + serverT.metrics());
            for (int i = 0; i < sizes.length; i++) {
                assertEquals(i, got.get(i)[0], "frame " + i + " out of order");
                assertEquals(sizes[i], got.get(i)[1], "length of frame " + i);
                assertEquals(hashes[i], got.get(i)[2], "bytes of frame " + i);
            }
            assertEquals(6, serverT.metrics().rendezvousRead(), serverT.metrics().toString());
            assertEquals(0, serverT.metrics().completionErrors(), serverT.metrics().toString());
        }
    }
}
