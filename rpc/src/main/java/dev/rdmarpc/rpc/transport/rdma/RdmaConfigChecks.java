package dev.rdmarpc.rpc.transport.rdma;

/** The checks of {@link RdmaConfig#conclude()} that span its pool and its groups. */
final class RdmaConfigChecks {
    private RdmaConfigChecks() {
    }

    /**
     * Checks the pool's chunks and slabs, each group, and that the completion queues and the pool
     * hold at least one connection (or one shared receive queue).
     *
     * @throws IllegalArgumentException naming the first bad setting
     */
    static void poolAndQueues(RdmaConfig config) {
        int chunkSize = config.bufferPool().chunkSize();
        if (chunkSize < 4096 || chunkSize > (16 << 20) || Integer.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException("bufferPool.chunkSize must be a power of two in [4 KiB, 16 MiB]: " + chunkSize);
        }
        if (config.bufferPool().slabSize() > (1L << 30)) {
            throw new IllegalArgumentException("bufferPool.slabSize must be at most 1 GiB: " + config.bufferPool().slabSize());
        }
        try {
            config.bufferPool().conclude();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bufferPool." + e.getMessage(), e);
        }
        long pooled = config.bufferPool().maxPooledBytes();
        config.receiveQueue().check();
        config.sharedReceiveQueue().check();
        config.send().check();
        config.polling().check();
        config.timeouts().check();
        int perConnection = config.receiveQueue().maxDepth() + RdmaConfig.RESERVED_RECEIVES;
        if (!config.sharedReceiveQueue().enabled() && perConnection > config.polling().completionQueueSize()) {
            throw new IllegalArgumentException("polling.completionQueueSize (" + config.polling().completionQueueSize()
                    + ") cannot hold one connection's receives (receiveQueue.maxDepth + 3 = " + perConnection + ")");
        }
        if (config.sharedReceiveQueue().enabled() && config.sharedReceiveQueue().maxDepth() > config.polling().completionQueueSize()) {
            throw new IllegalArgumentException("polling.completionQueueSize (" + config.polling().completionQueueSize()
                    + ") cannot hold the completions of a full shared receive queue (sharedReceiveQueue.maxDepth = "
                    + config.sharedReceiveQueue().maxDepth() + ")");
        }
        long minimum = (long) (config.receiveQueue().depth() + RdmaConfig.RESERVED_RECEIVES + 1) * chunkSize;
        if (pooled < minimum) {
            throw new IllegalArgumentException("bufferPool.maxPooledBytes (" + pooled + ") cannot hold one connection: it needs "
                    + minimum + " bytes ((receiveQueue.depth + 3 + 1) x bufferPool.chunkSize)");
        }
        long srqMinimum = (long) (config.sharedReceiveQueue().depth() + 1) * chunkSize;
        if (config.sharedReceiveQueue().enabled() && pooled < srqMinimum) {
            throw new IllegalArgumentException("bufferPool.maxPooledBytes (" + pooled
                    + ") cannot hold one shared receive queue: it needs " + srqMinimum
                    + " bytes ((sharedReceiveQueue.depth + 1) x bufferPool.chunkSize)");
        }
    }
}
