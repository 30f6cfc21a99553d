package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.cuda.CudaDevice;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What decides how a NIC can reach a GPU's memory: the GPU's own answers and whether a peer-memory
 * kernel module is loaded. A plain value, so the decision ({@link GpuDirectSelector}) is tested
 * without a GPU.
 *
 * @param deviceOrdinal          the GPU
 * @param dmaBufSupported        {@code CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED}
 * @param gpuDirectRdmaSupported {@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED}
 * @param peerMemoryModule       the loaded peer-memory kernel module ("nvidia_peermem", "nv_peer_mem"),
 *                               or null when none is
 */
public record GpuFacts(int deviceOrdinal, boolean dmaBufSupported, boolean gpuDirectRdmaSupported, String peerMemoryModule) {
    /** The kernel modules that let {@code ibv_reg_mr} pin GPU memory, newest first. */
    public static final String[] PEER_MEMORY_MODULES = {"nvidia_peermem", "nv_peer_mem"};

    /**
     * Reads the facts of a GPU from the driver and {@code /sys/module}.
     *
     * @param device the GPU
     * @return its facts
     */
    public static GpuFacts of(CudaDevice device) {
        return new GpuFacts(device.ordinal(), device.supportsDmaBuf(), device.supportsGpuDirectRdma(),
                loadedPeerMemoryModule(Path.of("/sys/module")));
    }

    /**
     * @param sysModule the directory listing loaded kernel modules ({@code /sys/module})
     * @return the first of {@link #PEER_MEMORY_MODULES} loaded, or null
     */
    public static String loadedPeerMemoryModule(Path sysModule) {
        for (String m : PEER_MEMORY_MODULES) {
            if (Files.isDirectory(sysModule.resolve(m))) {
                return m;
            }
        }
        return null;
    }
}
