package dev.rdmarpc.rpc.gpu;

/** How GPU memory reaches the NIC of an RDMA transport, best first. */
public enum GpuDirectMode {
    /** The GPU exports its memory as a dma-buf ({@code cuMemGetHandleForAddressRange}) and the NIC registers that ({@code ibv_reg_dmabuf_mr}). */
    DMABUF("dmabuf"),
    /** The NIC registers device memory by address ({@code ibv_reg_mr}) through the peer-memory kernel module ({@code nvidia_peermem}). */
    PEER_MEMORY("peer-memory"),
    /** The NIC cannot reach GPU memory: attachments are copied through pinned host memory the NIC registered. */
    STAGED("staged");

    private final String label;

    GpuDirectMode(String label) {
        this.label = label;
    }

    /** @return the short name used in logs and reports: "dmabuf", "peer-memory", "staged" */
    public String label() {
        return label;
    }

    @Override
    public String toString() {
        return label;
    }
}
