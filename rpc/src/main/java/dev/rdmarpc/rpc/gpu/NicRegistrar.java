package dev.rdmarpc.rpc.gpu;

/**
 * Registers memory with one NIC (an RDMA protection domain): what an RDMA transport gives the
 * {@link GpuBufferPool}. {@link VerbsNicRegistrar} implements it with libibverbs. Implementations
 * throw a {@link RuntimeException} whose message says what failed (verbs call, errno text).
 */
public interface NicRegistrar {
    /** @return the NIC's name for logs, e.g. "mlx5_0" */
    String name();

    /**
     * Registers a dma-buf ({@code ibv_reg_dmabuf_mr}).
     *
     * @param fd     the dma-buf file descriptor (the caller closes it afterwards)
     * @param offset the offset in the dma-buf where the region starts
     * @param length bytes
     * @param iova   the address remote peers use for the region's first byte
     * @param access {@code IBV_ACCESS_*} flags
     * @return the registration, owned by the caller
     */
    Registration registerDmaBuf(int fd, long offset, long length, long iova, int access);

    /**
     * Registers memory by address ({@code ibv_reg_mr}): host memory, or GPU memory where a peer-memory
     * kernel module lets the NIC pin it.
     *
     * @param address the first byte
     * @param length  bytes
     * @param access  {@code IBV_ACCESS_*} flags
     * @return the registration, owned by the caller
     */
    Registration registerMemory(long address, long length, int access);

    /** One memory region: its keys, and {@link #close()} deregisters it ({@code ibv_dereg_mr}) once. */
    interface Registration extends AutoCloseable {
        /** @return the local key, for SGEs */
        int lkey();

        /** @return the remote key, for peers' RDMA reads and writes */
        int rkey();

        /** Deregisters the region; once. */
        @Override
        void close();
    }
}
