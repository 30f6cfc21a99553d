package dev.rdmarpc.rpc.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Chooses how a NIC reaches a range of GPU memory and registers it: dma-buf first, peer-memory
 * second, staged through pinned host memory when neither works (with a log line that says so).
 *
 * <ol>
 *   <li><b>dmabuf</b>: when the GPU reports dma-buf support and the range is page aligned, export it
 *       ({@code cuMemGetHandleForAddressRange}) and register the fd ({@code ibv_reg_dmabuf_mr}); the
 *       fd is closed afterwards either way (the region keeps its own reference).</li>
 *   <li><b>peer-memory</b>: when the GPU reports GPUDirect RDMA support, register the device address
 *       ({@code ibv_reg_mr}), which works where a peer-memory kernel module is loaded.</li>
 *   <li><b>staged</b>: nothing is registered; the caller stages through pinned host memory.</li>
 * </ol>
 *
 * <p>Pure decision logic over {@link GpuFacts}, a {@link DmaBufExporter} and a {@link NicRegistrar},
 * so every branch is tested without a GPU or a NIC. Stateless and thread-safe.
 */
public final class GpuDirectSelector {
    private static final System.Logger LOG = System.getLogger(GpuDirectSelector.class.getName());

    private GpuDirectSelector() {
    }

    /** Exports device memory as a dma-buf (the CUDA driver's {@code cuMemGetHandleForAddressRange}). */
    @FunctionalInterface
    public interface DmaBufExporter {
        /**
         * @param address page-aligned device address
         * @param length  page-aligned length
         * @return the exported descriptor, owned by the caller
         */
        ExportedDmaBuf export(long address, long length);
    }

    /** A dma-buf file descriptor; {@link #close()} closes it once. */
    public interface ExportedDmaBuf extends AutoCloseable {
        /** @return the descriptor */
        int fd();

        @Override
        void close();
    }

    /**
     * The decision and, for a direct mode, the registration of the range.
     *
     * @param decision     what was chosen and why
     * @param registration the NIC registration of the GPU range; null for {@link GpuDirectMode#STAGED}
     */
    public record Selection(GpuDirectDecision decision, NicRegistrar.Registration registration) {
    }

    /**
     * Registers {@code [address, address + length)} of GPU memory with the NIC the best way that
     * works, logging a warning when it has to fall back to staging.
     *
     * @param facts    the GPU's facts
     * @param address  device address
     * @param length   bytes
     * @param access   {@code IBV_ACCESS_*} flags for the region
     * @param exporter exports dma-bufs
     * @param nic      registers with the NIC
     * @param log      where the staging fallback is reported ({@link System.Logger.Level#WARNING})
     * @return the decision and the registration (the caller owns it)
     */
    public static Selection select(GpuFacts facts, long address, long length, int access, DmaBufExporter exporter,
                                   NicRegistrar nic, System.Logger log) {
        Objects.requireNonNull(facts, "facts");
        Objects.requireNonNull(exporter, "exporter");
        Objects.requireNonNull(nic, "nic");
        List<String> attempts = new ArrayList<>(2);
        int gpu = facts.deviceOrdinal();
        long page = dev.rdmarpc.cuda.DmaBuf.PAGE_SIZE;

        if (!facts.dmaBufSupported()) {
            attempts.add("dmabuf: GPU " + gpu + " reports no dma-buf support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0)");
        } else if (address % page != 0 || length % page != 0 || length <= 0) {
            attempts.add("dmabuf: [0x" + Long.toHexString(address) + ", +" + length + ") is not aligned to the "
                    + page + "-byte host page size");
        } else {
            try (ExportedDmaBuf fd = exporter.export(address, length)) {
                NicRegistrar.Registration r = nic.registerDmaBuf(fd.fd(), 0, length, address, access);
                return new Selection(new GpuDirectDecision(gpu, nic.name(), GpuDirectMode.DMABUF,
                        "ibv_reg_dmabuf_mr of a dma-buf from cuMemGetHandleForAddressRange", attempts), r);
            } catch (RuntimeException | LinkageError e) {
                attempts.add("dmabuf: " + message(e));
            }
        }

        if (!facts.gpuDirectRdmaSupported()) {
            attempts.add("peer-memory: GPU " + gpu + " reports no GPUDirect RDMA support"
                    + " (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0)");
        } else {
            try {
                NicRegistrar.Registration r = nic.registerMemory(address, length, access);
                String module = facts.peerMemoryModule() == null ? "a peer-memory kernel module" : facts.peerMemoryModule();
                return new Selection(new GpuDirectDecision(gpu, nic.name(), GpuDirectMode.PEER_MEMORY,
                        "ibv_reg_mr of device memory through " + module, attempts), r);
            } catch (RuntimeException | LinkageError e) {
                attempts.add("peer-memory: " + message(e) + (facts.peerMemoryModule() == null
                        ? " (no peer-memory kernel module is loaded: modprobe nvidia_peermem)" : ""));
            }
        }

        GpuDirectDecision staged = new GpuDirectDecision(gpu, nic.name(), GpuDirectMode.STAGED,
                String.join("; ", attempts), attempts);
        (log == null ? LOG : log).log(System.Logger.Level.WARNING,
                "GPU {0} memory cannot be registered with {1} for GPUDirect RDMA, so GPU attachments are staged"
                        + " through pinned host memory: {2}", gpu, nic.name(), staged.reason());
        return new Selection(staged, null);
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        return m == null ? e.getClass().getName() : m;
    }
}
