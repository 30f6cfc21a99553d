package dev.rdmarpc.rpc.gpu;

import java.util.List;
import java.util.Objects;

/**
 * What GPU-direct registration decided for one GPU and NIC, and why: the mode chosen, the reason for
 * it, and every attempt before it in order ("dmabuf: ...", "peer-memory: ...").
 *
 * @param deviceOrdinal the GPU
 * @param nic           the NIC (device name) the memory is registered with
 * @param mode          the mode chosen
 * @param reason        why: how the chosen mode registers, or for {@link GpuDirectMode#STAGED} why
 *                      neither direct mode worked
 * @param attempts      the modes tried before and what each said (empty when dma-buf worked at once)
 */
public record GpuDirectDecision(int deviceOrdinal, String nic, GpuDirectMode mode, String reason, List<String> attempts) {
    /** Validates and copies {@code attempts}. */
    public GpuDirectDecision {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(reason, "reason");
        attempts = List.copyOf(attempts);
    }

    /** @return true when the NIC reads and writes GPU memory itself (dmabuf or peer-memory) */
    public boolean isDirect() {
        return mode != GpuDirectMode.STAGED;
    }

    /** @return one line for logs: "GPU 0 -> mlx5_0: dmabuf (...)" */
    public String describe() {
        return "GPU " + deviceOrdinal + " -> " + nic + ": " + mode.label() + " (" + reason + ")";
    }

    @Override
    public String toString() {
        return describe();
    }
}
