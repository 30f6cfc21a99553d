package dev.rdmarpc.rpc.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.cuda.CudaDevice;
import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.rpc.transport.rdma.RdmaTransport;
import dev.rdmarpc.rpc.transport.rdma.RegisteredMemory;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GPU-direct over RDMA, on a machine with a GPU and an RDMA NIC that can register its memory
 * (dma-buf or peer memory): a {@link GpuBufferPool} registers its slabs through the client
 * transport's {@link RdmaTransport#nicRegistrar}, a request attachment in one of its buffers is read
 * by the NIC from the GPU, and the response attachment is written by the NIC into another, by
 * rendezvous with the default configuration (from 1 MiB). The pool's registration goes through
 * {@code GpuDirectSelector}: dma-buf first ({@code CudaContext.exportDmaBuf}, then
 * {@code NicRegistrar.registerDmaBuf}), peer memory when dma-buf is refused. Needs the RDMA test environment's variables (two devices and their addresses, as in
 * the Soft-RoCE VM). Skipped where there is no CUDA driver, no GPU, no RDMA environment, or
 * registration of GPU memory fails; it has not run anywhere yet (no such machine here).
 */
@Tag("gpu")
@Timeout(180)
class GpuDirectRdmaGpuTest {
    private static final Method<Integer, Long> EXCHANGE = Method.of("gpu.direct", Codecs.INT, Codecs.LONG);

    private static long hash(MemorySegment s) {
        long h = 0xCBF29CE484222325L;
        for (long i = 0; i < s.byteSize(); i++) {
            h = (h ^ (s.get(ValueLayout.JAVA_BYTE, i) & 0xFF)) * 0x100000001B3L;
        }
        return h;
    }

    private static void fill(MemorySegment s, int seed) {
        for (long i = 0; i + 8 <= s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
    }

    @Test
    void gpuBuffersRegisteredThroughTheTransportMoveWithTheNicBothWays() throws Exception {
        CudaDevice gpu = GpuAttachmentGpuTest.firstGpu();
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not installed");
        RdmaEnvironment env = RdmaEnvironment.discover();
        assumeTrue(env.usable(), () -> "no RDMA test environment: " + env.problems());
        int n = 4 << 20;
        RdmaConfig config = new RdmaConfig(); // rendezvous from 1 MiB, the default
        assertEquals(RdmaConfig.DEFAULT_RENDEZVOUS_THRESHOLD, config.send().rendezvousThreshold());
        try (Arena arena = Arena.ofShared();
             GpuStaging staging = GpuStaging.create(gpu);
             RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config)) {
            MemorySegment served = arena.allocate(n, 4096);
            fill(served, 2);
            MemorySegment host = arena.allocate(n, 4096);
            fill(host, 1);
            try (RegisteredMemory reg = serverT.register(served);
                 GpuBufferPool pool = GpuBufferPool.create(GpuBufferPool.cudaMemory(staging.context()),
                         clientT.nicRegistrar(env.device0()), new GpuBufferPool.Config().slabSize(16 << 20).bufferSize(n));
                 RpcServer server = RpcServer.builder().bind(new InetSocketAddress(env.address1(), 0)).transport(serverT)
                         .registerBlocking(EXCHANGE, (ctx, len) -> {
                             ctx.responseAttachment(Attachment.of(reg.segment().asSlice(0, len)));
                             return hash(ctx.requestAttachment().segment());
                         }).start();
                 RpcClient client = RpcClient.builder().address(server.address()).transport(clientT)
                         .defaultTimeout(Duration.ofSeconds(60)).connect()) {
                GpuBuffer request = pool.acquire();
                GpuBuffer response = pool.acquire();
                assumeTrue(request.mode() != GpuDirectMode.STAGED,
                        () -> "GPU memory could not be registered with " + env.device0() + ": " + pool.decision().describe());
                try {
                    staging.context().copyHostToDevice(request.deviceAddress(), host);
                    Reply<Long> r = client.exchange(EXCHANGE, n, CallOptions.DEFAULT
                            .withAttachment(staging.attachment(request.deviceAddress(), n))
                            .withResponseAttachment(staging.attachment(response.deviceAddress(), n)));
                    assertEquals(hash(host), r.value(), "the server got the GPU's bytes");
                    MemorySegment back = arena.allocate(n, 4096);
                    staging.context().copyDeviceToHost(back, response.deviceAddress());
                    assertEquals(-1, back.mismatch(served), "the response attachment is in GPU memory");
                    assertEquals(n, clientT.metrics().zeroCopyBytes(), "the request was read by the NIC from the GPU");
                    assertEquals(n, clientT.metrics().rendezvousBytesLanded(), "the response was written by the NIC to the GPU");
                    assertEquals(0, clientT.metrics().reassemblyCopiedBytes() + serverT.metrics().reassemblyCopiedBytes(),
                            "nothing copied to reassemble");
                    assertEquals(0, client.metrics().responseAttachmentBytesCopied(), "nothing copied into the GPU target");
                } finally {
                    request.release();
                    response.release();
                }
            }
        }
    }
}
