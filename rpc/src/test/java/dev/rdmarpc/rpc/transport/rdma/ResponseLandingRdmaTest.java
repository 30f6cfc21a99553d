package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.hash;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
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
 * the registrations' transfers and the verbs resources after close.
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
