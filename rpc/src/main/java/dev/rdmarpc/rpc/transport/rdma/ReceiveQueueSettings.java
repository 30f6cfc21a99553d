package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import java.util.function.Consumer;

/**
 * The receive queue of each connection ({@code rdmarpc.rdma.receiveQueue.*}): receive buffers
 * posted and credited to the peer, growing while the peer keeps running out of credits. Not used
 * when the {@link SharedReceiveQueueSettings} is enabled. Held by an {@link RdmaConfig}, edited through
 * {@link RdmaConfig#receiveQueue(Consumer)}.
 */
public final class ReceiveQueueSettings {
    static final SettingsTable<ReceiveQueueSettings> SETTINGS =
            new SettingsTable<ReceiveQueueSettings>("ReceiveQueue", "rdmarpc.rdma.receiveQueue.")
                    .add("depth", SettingsTable::parseInt, ReceiveQueueSettings::depth, ReceiveQueueSettings::depth)
                    .add("maxDepth", SettingsTable::parseInt, ReceiveQueueSettings::maxDepth, ReceiveQueueSettings::maxDepth);

    private int depth = RdmaConfig.DEFAULT_RECEIVE_QUEUE_DEPTH;
    private int maxDepth = RdmaConfig.DEFAULT_MAX_RECEIVE_QUEUE_DEPTH;

    ReceiveQueueSettings() {
    }

    /**
     * @param n receive buffers posted per connection and credited to the peer, in [1, 4096];
     *          default 8 (2 MiB at the default chunk size, plus 3 reserved)
     * @return this
     */
    public ReceiveQueueSettings depth(int n) {
        this.depth = n;
        return this;
    }

    /**
     * @param n the most receive buffers a connection may grow to when its peer keeps running out
     *          of credits, at least {@link #depth}, at most 16384; default 32 (8 MiB at the default
     *          chunk size). Equal to the depth: no growth.
     * @return this
     */
    public ReceiveQueueSettings maxDepth(int n) {
        this.maxDepth = n;
        return this;
    }

    /** @return the initial receive depth */
    public int depth() {
        return depth;
    }

    /** @return the receive depth bound */
    public int maxDepth() {
        return maxDepth;
    }

    void check() {
        if (depth < 1 || depth > 4096) {
            throw new IllegalArgumentException("receiveQueue.depth must be in [1, 4096]: " + depth);
        }
        if (maxDepth < depth || maxDepth > 16384) {
            throw new IllegalArgumentException("receiveQueue.maxDepth must be in [receiveQueue.depth (" + depth
                    + "), 16384]: " + maxDepth);
        }
    }

    /** @return an independent copy */
    public ReceiveQueueSettings copy() {
        ReceiveQueueSettings c = new ReceiveQueueSettings();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
