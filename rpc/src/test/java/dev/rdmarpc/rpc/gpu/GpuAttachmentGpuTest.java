package dev.rdmarpc.rpc.gpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.cuda.Cuda;
import dev.rdmarpc.cuda.CudaContext;
import dev.rdmarpc.cuda.CudaDevice;
import dev.rdmarpc.cuda.CudaException;
import dev.rdmarpc.cuda.DeviceBuffer;
import dev.rdmarpc.cuda.DmaBuf;
import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.DeviceInfo;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.Verbs;
import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GPU attachments on a real GPU: a round trip of GPU memory through a loopback RPC over TCP (request
 * and response attachments on the GPU, staged through pinned memory both ways), and a report of what
 * GPU-direct registration says for this GPU and the first RDMA device. Skipped with "CUDA driver not
 * found: ..." where there is no driver.
 */
@Tag("gpu")
@Timeout(120)
class GpuAttachmentGpuTest {
    static final Method<Integer, String> GPU_ECHO = Method.of("gpu.echo", Codecs.INT, Codecs.STRING);
    static final Method<Integer, String> GPU_ECHO_INLINE = Method.of("gpu.echoInline", Codecs.INT, Codecs.STRING);

    static CudaDevice firstGpu() {
        assumeTrue(Cuda.isAvailable(), () -> Cuda.unavailabilityCause().getMessage());
        try {
            Cuda.init();
        } catch (CudaException e) {
            if ("CUDA_ERROR_NO_DEVICE".equals(e.errorName())) {
                abort("no CUDA device: " + e.getMessage());
            }
            throw e;
        }
        return CudaDevice.get(0);
    }

    static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed + (i >> 10)));
        }
    }

    @Test
    void gpuAttachmentRoundTripThroughLoopbackTcp() {
        CudaDevice gpu = firstGpu();
        GpuStaging.Config small = new GpuStaging.Config().chunkSize(256 << 10); // several chunks per attachment
        int max = (3 << 20) + 5;
        try (GpuStaging serverStaging = GpuStaging.create(gpu, small);
             GpuStaging clientStaging = GpuStaging.create(gpu, small);
             DeviceBuffer serverBuf = serverStaging.context().allocate(max);
             Arena arena = Arena.ofShared()) {
            RpcServer.Builder b = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)));
            // Blocking handler (held frames, overlapped) and inline handler (copied under the claim):
            // the request attachment arrives in host memory, goes to the GPU, and goes back from there.
            b.registerBlocking(GPU_ECHO, (ctx, n) -> {
                Attachment onGpu = serverStaging.copyToDevice(ctx.requestAttachment(), serverBuf);
                ctx.responseAttachment(onGpu);
                return "blocking " + n;
            });
            b.register(GPU_ECHO_INLINE, (ctx, n) -> {
                ctx.responseAttachment(serverStaging.copyToDevice(ctx.requestAttachment(), serverBuf));
                return "inline " + n;
            });
            try (RpcServer server = b.start();
                 RpcClient client = RpcClient.builder().address(server.address()).defaultTimeout(Duration.ofSeconds(30)).connect();
                 DeviceBuffer request = clientStaging.context().allocate(max);
                 DeviceBuffer response = clientStaging.context().allocate(max)) {
                for (Method<Integer, String> m : java.util.List.of(GPU_ECHO, GPU_ECHO_INLINE)) {
                    for (int n : new int[] {1, 4097, 256 << 10, max}) {
                        MemorySegment host = arena.allocate(n);
                        fill(host, n);
                        request.copyFromHost(host, 0);
                        response.fill(0, max, (byte) 0);
                        Reply<String> r = client.exchange(m, n, CallOptions.DEFAULT
                                .withAttachment(clientStaging.attachment(request, 0, n))
                                .withResponseAttachment(clientStaging.attachment(response)));
                        assertTrue(r.value().endsWith(" " + n), r.value());
                        assertEquals(Attachment.Location.DEVICE, r.attachment().location());
                        assertEquals(gpu.ordinal(), r.attachment().deviceId());
                        assertEquals(n, r.attachment().length());
                        MemorySegment back = arena.allocate(n);
                        response.copyToHost(0, back);
                        assertEquals(-1, back.mismatch(host), m.name() + " " + n + " bytes GPU -> TCP -> GPU -> TCP -> GPU");
                    }
                }
                System.out.println("GPU attachments round-tripped over TCP on " + gpu);
                // Host memory posing as a device attachment is refused before anything is sent.
                MemorySegment notGpu = arena.allocate(64);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> client.call(GPU_ECHO, 1,
                        CallOptions.DEFAULT.withAttachment(clientStaging.attachment(notGpu.address(), 64))));
                assertTrue(e.getMessage().contains("is not device memory of GPU"), e.getMessage());
            }
        }
    }

    @Test
    void reportWhatGpuDirectRegistrationSays() {
        CudaDevice gpu = firstGpu();
        GpuFacts facts = GpuFacts.of(gpu);
        System.out.println("GPU-direct facts: " + gpu + "; peer-memory module: "
                + (facts.peerMemoryModule() == null ? "none loaded" : facts.peerMemoryModule()));
        try (CudaContext ctx = gpu.retainPrimaryContext(); DeviceBuffer buf = ctx.allocate(4 << 20)) {
            long aligned = (buf.address() + DmaBuf.PAGE_SIZE - 1) & -DmaBuf.PAGE_SIZE;
            try (DmaBuf d = ctx.exportDmaBuf(aligned, 2 << 20)) {
                System.out.println("dma-buf export: ok, " + d);
            } catch (CudaException e) {
                System.out.println("dma-buf export: " + e.getMessage());
            }
            assumeTrue(Ibverbs.isAvailable(), "libibverbs not installed: registration with a NIC not attempted");
            List<DeviceInfo> devices = Verbs.devices();
            if (devices.isEmpty()) {
                System.out.println("GPU-direct registration: no RDMA device, not attempted");
                abort("no RDMA device: GPU-direct registration not attempted");
            }
            try (Context context = Context.open(devices.get(0).name());
                 ProtectionDomain pd = context.allocateProtectionDomain()) {
                try (GpuBufferPool pool = GpuBufferPool.create(GpuBufferPool.cudaMemory(ctx),
                        new VerbsNicRegistrar(pd), new GpuBufferPool.Config().slabSize(8 << 20).bufferSize(1 << 20))) {
                    System.out.println("GPU-direct registration said: " + pool.decision().describe());
                    for (String attempt : pool.decision().attempts()) {
                        System.out.println("  before that: " + attempt);
                    }
                    GpuBuffer b = pool.acquire();
                    System.out.println("  first buffer: " + b + ", lkey 0x" + Integer.toHexString(b.lkey()));
                    b.release();
                }
            }
        }
    }
}
