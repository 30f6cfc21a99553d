package dev.rdmarpc.rpc.transport.rdma;

import static dev.rdmarpc.rpc.transport.rdma.RdmaRpcTest.hash;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.NativeCallException;
import dev.rdmarpc.ibverbs.verbs.VerbsResources;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.DeviceStaging;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.gpu.NicRegistrar;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The GPU-direct path of device attachments over the Soft-RoCE link, with host memory standing in
 * for GPU memory: memory registered through the transport's {@link RdmaTransport#nicRegistrar} (as a
 * {@code GpuBufferPool} registers its slabs) is named by {@link Attachment#device} attachments, and
 * the transport moves them with the NIC where they lie, never through their {@link DeviceStaging}.
 * The transport cannot tell these addresses from GPU memory registered by dma-buf or peer memory, so
 * everything but the GPU itself runs here; the staging counts what would have been copied to or from
 * a GPU. What can fail: the bytes (hashes computed by the side that had them), the staging's call
 * counts (0 on the NIC path, more when the same memory is not registered), the zero-copy and landed
 * byte counts, and the verbs resources after close.
 */
@RdmaTest
@Timeout(600)
class DeviceMemoryPathRdmaTest {
    private static final int THRESHOLD = RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD;
    private static final int N = 3 << 20;
    /** The request is the response attachment's length; the server answers the request attachment's hash. */
    private static final Method<Integer, Long> EXCHANGE = Method.of("deviceExchange", Codecs.INT, Codecs.LONG);

    /** A staging for "device" addresses that are host memory: it copies, and counts its copies. */
    static final class CountingStaging implements DeviceStaging {
        final AtomicLong copies = new AtomicLong();

        @Override
        public void validate(int deviceId, long address, long length) {
        }

        @Override
        public void copyToHost(long src, MemorySegment dst, long dstOffset, long length, LongConsumer ready) {
            copies.incrementAndGet();
            MemorySegment.copy(MemorySegment.ofAddress(src).reinterpret(length), 0, dst, dstOffset, length);
            ready.accept(length);
        }

        @Override
        public void copyToDevice(MemorySegment src, long srcOffset, long dst, long length) {
            copies.incrementAndGet();
            MemorySegment.copy(src, srcOffset, MemorySegment.ofAddress(dst).reinterpret(length), 0, length);
        }
    }

    /** The default configuration's send group: rendezvous from 1 MiB (the pool sized for the VM). */
    private static RdmaConfig config() {
        return RdmaTestEnv.smallConfig();
    }

    private static void fill(MemorySegment s, int seed) {
        for (long i = 0; i + 8 <= s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
    }

    /** A server answering from {@code served} "device" memory with its staging. */
    private static RpcServer server(RdmaTransport t, MemorySegment served, DeviceStaging staging) throws Exception {
        return RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(t)
                .registerBlocking(EXCHANGE, (ctx, n) -> {
                    ctx.responseAttachment(Attachment.device(0, served.address(), n, staging));
                    Attachment a = ctx.requestAttachment();
                    return hash(a.segment());
                })
                .start();
    }

    private static Reply<Long> exchange(RpcClient client, MemorySegment request, MemorySegment target, DeviceStaging staging) {
        target.fill((byte) 0x5A);
        return client.exchange(EXCHANGE, (int) target.byteSize(), CallOptions.DEFAULT
                .withAttachment(Attachment.device(0, request.address(), request.byteSize(), staging))
                .withResponseAttachment(Attachment.device(0, target.address(), target.byteSize(), staging)));
    }

    @Test
    void registeredDeviceAttachmentsMoveWithTheNicAndNeverThroughTheirStaging() throws Exception {
        var before = VerbsResources.snapshot();
        CountingStaging clientStaging = new CountingStaging();
        CountingStaging serverStaging = new CountingStaging();
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config())) {
            MemorySegment clientMemory = arena.allocate(2L * N, 4096);
            MemorySegment served = arena.allocate(N, 4096);
            fill(clientMemory, 1);
            fill(served, 2);
            NicRegistrar clientNic = clientT.nicRegistrar(RdmaTestEnv.device0());
            NicRegistrar serverNic = serverT.nicRegistrar(RdmaTestEnv.device1());
            try (NicRegistrar.Registration c = clientNic.registerMemory(clientMemory.address(), clientMemory.byteSize(), 0);
                 NicRegistrar.Registration s = serverNic.registerMemory(served.address(), served.byteSize(), 0);
                 RpcServer server = server(serverT, served, serverStaging);
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                         .defaultTimeout(Duration.ofSeconds(60)).connect()) {
                for (int n : new int[]{THRESHOLD, N}) {
                    MemorySegment request = clientMemory.asSlice(0, n);
                    MemorySegment target = clientMemory.asSlice(N, n);
                    long sent0 = clientT.metrics().zeroCopyBytes();
                    long served0 = serverT.metrics().zeroCopyBytes();
                    long landed0 = clientT.metrics().rendezvousBytesLanded();
                    Reply<Long> r = exchange(client, request, target, clientStaging);
                    assertEquals(hash(request), r.value(), "the server got the request attachment of " + n + " bytes");
                    assertEquals(hash(served.asSlice(0, n)), hash(target), "the response attachment of " + n + " bytes");
                    assertEquals(target.address(), r.attachment().address(), "the reply's attachment is the target");
                    assertEquals(n, clientT.metrics().zeroCopyBytes() - sent0, "request read by the NIC where it lies");
                    assertEquals(n, serverT.metrics().zeroCopyBytes() - served0, "response read by the NIC where it lies");
                    assertEquals(n, clientT.metrics().rendezvousBytesLanded() - landed0, "response written by the NIC");
                }
                assertEquals(2, clientT.metrics().rendezvousSent(), "both requests by rendezvous, default threshold");
                assertEquals(2, serverT.metrics().rendezvousSent(), "both responses by rendezvous, default threshold");
                assertEquals(0, clientT.metrics().reassemblyCopiedBytes() + serverT.metrics().reassemblyCopiedBytes(),
                        "nothing copied to reassemble on either side");
                assertEquals(0, clientStaging.copies.get(), "the client's staging never ran");
                assertEquals(0, serverStaging.copies.get(), "the server's staging never ran");
            }
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }

    /**
     * The dma-buf door itself, in the VM: a dma-buf of host pages from the kernel's udmabuf device
     * (the nearest thing to a GPU's exported dma-buf here) handed to {@link NicRegistrar#registerDmaBuf},
     * the call a {@code GpuBufferPool} makes with a GPU's dma-buf. The VM's kernel makes the dma-buf
     * (udmabuf is there), and Soft-RoCE refuses to register it: {@code ibv_reg_dmabuf_mr} fails with
     * EOPNOTSUPP (errno 95), nothing is recorded, and the same pages registered by address work. That
     * refusal is what this checks; the registration by address ({@link NicRegistrar#registerMemory}),
     * which ends in the same table through the same registrar, is what the rest of the path runs with
     * here.
     */
    @Test
    void softRoceRefusesADmaBufRegistrationWithEopnotsupp() throws Exception {
        var before = VerbsResources.snapshot();
        try (Arena arena = Arena.ofShared();
             RdmaTransport t = RdmaTransport.create(config());
             UdmaBuf buf = UdmaBuf.create(4 << 20)) {
            buf.memory().fill((byte) 1);
            NicRegistrar nic = t.nicRegistrar(RdmaTestEnv.device0());
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> nic.registerDmaBuf(buf.dmaBufFd(), 0, buf.memory().byteSize(), buf.memory().address(), 0));
            NativeCallException n = nativeCause(e);
            System.out.println("ibv_reg_dmabuf_mr on " + RdmaTestEnv.device0() + " with a udmabuf: " + n);
            assertEquals("ibv_reg_dmabuf_mr", n.operation(), e.toString());
            assertEquals(95, n.errno(), "EOPNOTSUPP: " + e);
            // the transport goes on: the same pages registered by address are used
            try (NicRegistrar.Registration r = nic.registerMemory(buf.memory().address(), buf.memory().byteSize(), 0)) {
                assertTrue(r.rkey() != 0 || r.lkey() != 0);
            }
        }
        assertEquals(before, VerbsResources.snapshot(), "live verbs resources after close");
    }

    private static NativeCallException nativeCause(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof NativeCallException n) {
                return n;
            }
        }
        throw new AssertionError("no native call's errno in " + e, e);
    }

    @Test
    void theSameMemoryNotRegisteredIsStaged() throws Exception {
        CountingStaging clientStaging = new CountingStaging();
        CountingStaging serverStaging = new CountingStaging();
        try (Arena arena = Arena.ofShared();
             RdmaTransport serverT = RdmaTransport.create(config());
             RdmaTransport clientT = RdmaTransport.create(config())) {
            MemorySegment clientMemory = arena.allocate(2L * N, 4096);
            MemorySegment served = arena.allocate(N, 4096);
            fill(clientMemory, 3);
            fill(served, 4);
            try (RpcServer server = server(serverT, served, serverStaging);
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                         .defaultTimeout(Duration.ofSeconds(60)).connect()) {
                MemorySegment request = clientMemory.asSlice(0, N);
                MemorySegment target = clientMemory.asSlice(N, N);
                Reply<Long> r = exchange(client, request, target, clientStaging);
                assertEquals(hash(request), r.value());
                assertEquals(hash(served), hash(target));
                assertEquals(2, clientStaging.copies.get(), "the client staged the request out and the response in");
                assertEquals(1, serverStaging.copies.get(), "the server staged the response out");
                assertEquals(0, clientT.metrics().zeroCopyBytes());
                assertEquals(0, serverT.metrics().zeroCopyBytes());
                assertEquals(0, clientT.metrics().rendezvousBytesLanded());
                assertEquals(1, clientT.metrics().attachmentSinksRefused(), "the target was not the transport's to write");
            }
        }
    }
}
