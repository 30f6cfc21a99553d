package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.hash;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Response attachments without a copy over the Soft-RoCE link, for real: a handler's attachment in
 * memory registered with the server's transport is read by the NIC where it lies, and a client's
 * response target in memory registered with its transport is written by the NIC (rendezvous frames;
 * smaller ones are copied into it). What can fail here: the bytes (each response carries the hash
 * its server computed over the attachment it sent), where the reply's attachment lies, the exact
 * counts of bytes sent from the handler's memory, landed in the target, and copied to reassemble, and
 * the registrations' transfers and the verbs resources after close. With the default configuration
 * (rendezvous from 1 MiB) 1 MiB and 8 MiB attachments go both ways and nothing is copied on either
 * side; a target too small fails its call with {@code PAYLOAD_TOO_LARGE} and the connection goes on.
 */
@RdmaTest
@Timeout(600)
class ResponseLandingRdmaTest {
    private static final int THRESHOLD = RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD;
    /** A response's frame: the header, the hash (the payload), then the attachment. */
    private static final int OVERHEAD = FrameDescriptor.HEADER_LENGTH + 8;
    private static final int MAX = (8 << 20) + 5;
    /** Answers {@code n} bytes of the server's registered memory as the attachment, and their hash. */
    private static final Method<Integer, Long> FROM_REGISTERED = Method.of("fromRegistered", Codecs.INT, Codecs.LONG);
    /** The same from memory the server did not register (copied into the frame). */
    private static final Method<Integer, Long> FROM_PLAIN = Method.of("fromPlain", Codecs.INT, Codecs.LONG);

    /** Answers {@code n} bytes of the server's registered memory; the value is the request attachment's hash. */
    private static final Method<Integer, Long> BOTH_WAYS = Method.of("bothWays", Codecs.INT, Codecs.LONG);

    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(THRESHOLD));
    }

    private static MemorySegment pattern(Arena arena, int size, int seed) {
        MemorySegment s = arena.allocate(size, 4096);
        for (long i = 0; i + 8 <= size; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        for (long i = size & ~7L; i < size; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i ^ seed));
        }
        return s;
    }

    /** A server on {@code serverT} whose two methods answer from {@code registered} and {@code plain}. */
    private static RpcServer server(RdmaTransport serverT, MemorySegment registered, MemorySegment plain) throws Exception {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                .registerBlocking(FROM_REGISTERED, (ctx, n) -> {
                    MemorySegment a = registered.asSlice(n % 4096, n);
                    ctx.responseAttachment(Attachment.of(a));
                    return hash(a);
                })
                .registerBlocking(FROM_PLAIN, (ctx, n) -> {
                    MemorySegment a = plain.asSlice(n % 4096, n);
                    ctx.responseAttachment(Attachment.of(a));
                    return hash(a);
                })
                .start();
    }

    private static RpcClient client(RpcServer server, RdmaTransport t) throws Exception {
        return RpcClient.builder().address(server.address()).transport(t).defaultTimeout(Duration.ofSeconds(60)).connect();
    }

    /** Calls {@code method} for {@code n} bytes into {@code target}; checks the bytes and where they lie. */
    private static void fetch(RpcClient client, Method<Integer, Long> method, int n, MemorySegment target) {
        target.fill((byte) 0x5A);
        Reply<Long> r = client.exchange(method, n, CallOptions.DEFAULT.withResponseAttachment(Attachment.of(target)));
        assertEquals(n, r.attachment().length(), "attachment length");
        assertEquals(target.address(), r.attachment().segment().address(), "the attachment lies in the caller's target");
        assertEquals(r.value(), hash(target.asSlice(0, n)), "the " + n + " bytes in the target are the server's");
        if (target.byteSize() > n) {
            assertEquals((byte) 0x5A, target.get(ValueLayout.JAVA_BYTE, n), "nothing written past the attachment");
        }
    }

    @Test
    void responseAttachmentsAroundTheThresholdLandInTheCallersRegisteredBufferAndGoFromTheHandlersWithoutACopy()
            throws Exception {
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config())) {
            MemorySegment served = pattern(arena, MAX + 4096, 3);
            try (RegisteredMemory serverReg = serverT.register(served);
                 RegisteredMemory clientReg = clientT.register(arena.allocate(MAX + 8192, 4096));
                 RpcServer server = server(serverT, served, pattern(arena, MAX + 4096, 4));
                 RpcClient client = client(server, clientT)) {
                RdmaMetrics c = clientT.metrics();
                RdmaMetrics s = serverT.metrics();
                for (int n : new int[]{4096, THRESHOLD - OVERHEAD - 1, THRESHOLD - OVERHEAD, THRESHOLD - OVERHEAD + 1,
                    3 << 20, MAX}) {
                    boolean rendezvous = n + OVERHEAD >= THRESHOLD;
                    String what = "a response attachment of " + n + " bytes (frame " + (n + OVERHEAD) + ", threshold "
                            + THRESHOLD + ")";
                    long landed0 = c.rendezvousBytesLanded();
                    long read0 = c.rendezvousRead();
                    long copied0 = c.reassemblyCopiedBytes();
                    long zeroCopy0 = s.zeroCopyBytes();
                    fetch(client, FROM_REGISTERED, n, clientReg.segment().asSlice(8192 - n % 4096, n + 1));
                    assertEquals(n, s.zeroCopyBytes() - zeroCopy0, "sent from the handler's memory, " + what);
                    assertEquals(rendezvous ? 1 : 0, c.rendezvousRead() - read0, "read by rendezvous, " + what);
                    assertEquals(rendezvous ? n : 0, c.rendezvousBytesLanded() - landed0, "written by the NIC into the target, " + what);
                    if (rendezvous) {
                        assertEquals(0, c.reassemblyCopiedBytes() - copied0, "copied to reassemble, " + what);
                    }
                    assertEquals(0, clientReg.transfersInFlight(), "the target is free when the call returns");
                }
                assertEquals(0, c.attachmentSinksRefused(), c.toString());
                assertEquals(0, c.completionErrors(), c.toString());
                assertEquals(0, s.completionErrors(), s.toString());
                // every response's attachment went from the handler's memory: the registration is free again
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (serverReg.transfersInFlight() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertEquals(0, serverReg.transfersInFlight(), "the server's registration after the responses");
            }
        }
    }

    @Test
    void withTheDefaultConfigurationOneAndEightMebibytesGoBothWaysWithoutACopy() throws Exception {
        RdmaConfig config = RdmaTestEnv.smallConfig(); // buffer pool sized for the VM; the send group as it is
        assertEquals(RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD, config.send().rendezvousThreshold(), "the default threshold");
        int max = 8 << 20;
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig())) {
            MemorySegment served = pattern(arena, max, 11);
            MemorySegment requests = pattern(arena, max, 12);
            try (RegisteredMemory serverReg = serverT.register(served);
                 RegisteredMemory clientReq = clientT.register(requests);
                 RegisteredMemory clientReg = clientT.register(arena.allocate(max + 4096L, 4096));
                 RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                         .registerBlocking(BOTH_WAYS, (ctx, n) -> {
                             ctx.responseAttachment(Attachment.of(served.asSlice(0, n)));
                             return hash(ctx.requestAttachment().segment());
                         })
                         .start();
                 RpcClient client = client(server, clientT)) {
                RdmaMetrics c = clientT.metrics();
                RdmaMetrics s = serverT.metrics();
                for (int n : new int[]{1 << 20, max}) {
                    String what = n + " bytes each way, default threshold";
                    long cZero = c.zeroCopyBytes();
                    long sZero = s.zeroCopyBytes();
                    long cSent = c.rendezvousSent();
                    long sSent = s.rendezvousSent();
                    long cRead = c.rendezvousRead();
                    long sRead = s.rendezvousRead();
                    long landed = c.rendezvousBytesLanded();
                    MemorySegment request = requests.asSlice(0, n);
                    MemorySegment target = clientReg.segment().asSlice(0, n + 1L);
                    target.fill((byte) 0x5A);
                    Reply<Long> r = client.exchange(BOTH_WAYS, n, CallOptions.DEFAULT
                            .withAttachment(Attachment.of(request))
                            .withResponseAttachment(Attachment.of(target)));
                    assertEquals(hash(request), r.value(), "the server got the request attachment, " + what);
                    assertEquals(hash(served.asSlice(0, n)), hash(target.asSlice(0, n)), "the response attachment, " + what);
                    assertEquals(target.address(), r.attachment().segment().address(), "it lies in the target, " + what);
                    assertEquals((byte) 0x5A, target.get(ValueLayout.JAVA_BYTE, n), "nothing written past it, " + what);
                    // request: sent by rendezvous from the caller's registered memory, read by the server's NIC
                    assertEquals(n, c.zeroCopyBytes() - cZero, "request read where it lies, " + what);
                    assertEquals(1, c.rendezvousSent() - cSent, "request sent by rendezvous, " + what);
                    assertEquals(1, s.rendezvousRead() - sRead, "request read by rendezvous, " + what);
                    // response: sent by rendezvous from the handler's registered memory, written into the target
                    assertEquals(n, s.zeroCopyBytes() - sZero, "response read where it lies, " + what);
                    assertEquals(1, s.rendezvousSent() - sSent, "response sent by rendezvous, " + what);
                    assertEquals(1, c.rendezvousRead() - cRead, "response read by rendezvous, " + what);
                    assertEquals(n, c.rendezvousBytesLanded() - landed, "response written by the NIC into the target, " + what);
                }
                // copied bytes: none on either side, in the transport or in the client's core
                assertEquals(0, c.reassemblyCopiedBytes(), c.toString());
                assertEquals(0, s.reassemblyCopiedBytes(), s.toString());
                assertEquals(0, client.metrics().responseAttachmentBytesCopied(), client.metrics().toString());
                assertEquals(0, c.attachmentSinksRefused() + c.completionErrors() + s.completionErrors());
                assertEquals(0, clientReg.transfersInFlight());
            }
        }
    }

    @Test
    void aTargetTooSmallFailsTheCallWithAClearStatusLeavesTheTargetAndTheConnectionGoesOn() throws Exception {
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig())) {
            int n = 1 << 20;
            MemorySegment served = pattern(arena, n + 4096, 13);
            try (RegisteredMemory serverReg = serverT.register(served);
                 RegisteredMemory clientReg = clientT.register(arena.allocate(2L * n, 4096));
                 RpcServer server = server(serverT, served, served);
                 RpcClient client = client(server, clientT)) {
                MemorySegment small = clientReg.segment().asSlice(0, n - 1);
                small.fill((byte) 0x5A);
                long landed0 = clientT.metrics().rendezvousBytesLanded();
                RpcException e = assertThrows(RpcException.class, () -> client.exchange(FROM_REGISTERED, n,
                        CallOptions.DEFAULT.withResponseAttachment(Attachment.of(small))));
                assertEquals(Status.PAYLOAD_TOO_LARGE, e.status(), e.toString());
                assertTrue(e.getMessage().contains(n + " bytes does not fit"), e.getMessage());
                assertEquals(-1, small.mismatch(arena.allocate(n - 1).fill((byte) 0x5A)), "the target is untouched");
                assertEquals(0, clientT.metrics().rendezvousBytesLanded() - landed0);
                assertEquals(0, clientReg.transfersInFlight());
                // the same connection goes on: the next call lands
                fetch(client, FROM_REGISTERED, n, clientReg.segment().asSlice(n, n));
                assertEquals(1, client.metrics().connectionsOpened(), "one connection all along");
                assertEquals(0, client.metrics().connectionsClosed(), "not closed");
            }
        }
    }

    @Test
    void aCancelWhileTheNicWritesTheTargetDoesNotEndTheCallBeforeTheResponse() throws Exception {
        int n = 8 << 20;
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig());
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig())) {
            MemorySegment served = pattern(arena, n + 4096, 17);
            try (RegisteredMemory serverReg = serverT.register(served);
                 RegisteredMemory clientReg = clientT.register(arena.allocate(n, 4096));
                 RpcServer server = server(serverT, served, served);
                 RpcClient client = client(server, clientT)) {
                MemorySegment target = clientReg.segment();
                boolean caught = false;
                for (int attempt = 0; attempt < 5 && !caught; attempt++) {
                    target.fill((byte) 0x5A);
                    CompletableFuture<Reply<Long>> f = client.exchangeAsync(FROM_REGISTERED, n,
                            CallOptions.DEFAULT.withResponseAttachment(Attachment.of(target)));
                    // the read into the target holds a use of its registration while the NIC writes it
                    while (!f.isDone() && clientReg.transfersInFlight() == 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(50_000);
                    }
                    if (f.isDone()) {
                        f.get();
                        continue; // the read was over before this thread saw it: again
                    }
                    caught = true;
                    assertFalse(f.cancel(true), "a cancel while the NIC writes the target does nothing");
                    Reply<Long> r = f.get(60, TimeUnit.SECONDS);
                    assertEquals(0, clientReg.transfersInFlight(), "the NIC is done with the target when the call completes");
                    assertEquals(r.value(), hash(target), "the call completed with its response, all of it in the target");
                }
                assertTrue(caught, "no read into the target was seen in flight in 5 calls of 8 MiB");
                assertEquals(0, client.metrics().cancelled());
            }
        }
    }

    @Test
    void anAttachmentCopiedIntoTheServersFrameIsScatteredIntoTheTarget() throws Exception {
        // one part holds header, payload and attachment: its read is split between a pooled buffer and the target
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config());
             RpcServer server = server(serverT, pattern(arena, MAX + 4096, 5), pattern(arena, MAX + 4096, 6));
             RegisteredMemory clientReg = clientT.register(arena.allocate(MAX + 4096, 4096));
             RpcClient client = client(server, clientT)) {
            for (int n : new int[]{THRESHOLD - OVERHEAD, MAX}) {
                long landed0 = clientT.metrics().rendezvousBytesLanded();
                long zeroCopy0 = serverT.metrics().zeroCopyBytes();
                fetch(client, FROM_PLAIN, n, clientReg.segment().asSlice(4096 - n % 4096, n));
                assertEquals(0, serverT.metrics().zeroCopyBytes() - zeroCopy0, "the server copied it into the frame");
                assertEquals(n, clientT.metrics().rendezvousBytesLanded() - landed0, "written by the NIC into the target");
            }
            assertEquals(0, clientT.metrics().reassemblyCopiedBytes(), clientT.metrics().toString());
        }
    }

    @Test
    void aTargetOutsideRegisteredMemoryIsFilledByACopy() throws Exception {
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config());
             RpcServer server = server(serverT, pattern(arena, MAX + 4096, 7), pattern(arena, MAX + 4096, 8));
             RpcClient client = client(server, clientT)) {
            fetch(client, FROM_PLAIN, 3 << 20, arena.allocate(3 << 20, 4096));
            assertEquals(1, clientT.metrics().attachmentSinksRefused(), clientT.metrics().toString());
            assertEquals(0, clientT.metrics().rendezvousBytesLanded(), clientT.metrics().toString());
            assertEquals(1, clientT.metrics().rendezvousRead(), "still read by rendezvous, into a pooled buffer");
        }
    }

    @Test
    void manyCallsLandInTheirOwnTargetsAtOnceAndEverythingIsGivenBack() throws Exception {
        var before = VerbsResources.snapshot();
        int calls = 12;
        int n = 1 << 20;
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config())) {
            MemorySegment served = pattern(arena, n + 4096, 9);
            try (RegisteredMemory serverReg = serverT.register(served);
                 RegisteredMemory clientReg = clientT.register(arena.allocate((long) calls * n, 4096));
                 RpcServer server = server(serverT, served, served);
                 RpcClient a = client(server, clientT);
                 RpcClient b = client(server, clientT)) {
                List<CompletableFuture<Reply<Long>>> futures = new ArrayList<>();
                for (int i = 0; i < calls; i++) {
                    MemorySegment target = clientReg.segment().asSlice((long) i * n, n);
                    target.fill((byte) 0x5A);
                    futures.add((i % 2 == 0 ? a : b).exchangeAsync(FROM_REGISTERED, n - i,
                            CallOptions.DEFAULT.withResponseAttachment(Attachment.of(target))));
                }
                for (int i = 0; i < calls; i++) {
                    Reply<Long> r = futures.get(i).get(120, TimeUnit.SECONDS);
                    MemorySegment target = clientReg.segment().asSlice((long) i * n, n);
                    assertEquals(target.address(), r.attachment().segment().address(), "call " + i);
                    assertEquals(r.value(), hash(target.asSlice(0, n - i)), "the bytes of call " + i);
                    if (i > 0) {
                        assertEquals((byte) 0x5A, target.get(ValueLayout.JAVA_BYTE, n - i), "nothing past call " + i + "'s attachment");
                    }
                }
                assertEquals(sum(n, calls), clientT.metrics().rendezvousBytesLanded(), clientT.metrics().toString());
                assertEquals(0, clientReg.transfersInFlight());
            }
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }

    private static long sum(int n, int calls) {
        long s = 0;
        for (int i = 0; i < calls; i++) {
            s += n - i;
        }
        return s;
    }
}
