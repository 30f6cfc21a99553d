package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import java.util.function.Consumer;

/**
 * The shared receive queue ({@code rdmarpc.rdma.sharedReceiveQueue.*}): when enabled, each I/O
 * thread receives through one queue per device instead of one queue per connection, so receive
 * memory does not grow with the number of connections (see docs/rdma.md for the trade-off).
 * Held by an {@link RdmaConfig}, edited through {@link RdmaConfig#sharedReceiveQueue(Consumer)}.
 */
public final class SharedReceiveQueueSettings {
    static final SettingsTable<SharedReceiveQueueSettings> SETTINGS =
            new SettingsTable<SharedReceiveQueueSettings>("SharedReceiveQueue", "rdmarpc.rdma.sharedReceiveQueue.")
                    .add("enabled", SettingsTable::parseBoolean, SharedReceiveQueueSettings::enabled, SharedReceiveQueueSettings::enabled)
                    .add("depth", SettingsTable::parseInt, SharedReceiveQueueSettings::depth, SharedReceiveQueueSettings::depth)
                    .add("maxDepth", SettingsTable::parseInt, SharedReceiveQueueSettings::maxDepth, SharedReceiveQueueSettings::maxDepth)
                    .add("credits", SettingsTable::parseInt, SharedReceiveQueueSettings::credits, SharedReceiveQueueSettings::credits);

    private boolean enabled;
    private int depth = RdmaConfig.DEFAULT_SHARED_RECEIVE_QUEUE_DEPTH;
    private int maxDepth = RdmaConfig.DEFAULT_MAX_SHARED_RECEIVE_QUEUE_DEPTH;
    private int credits = RdmaConfig.DEFAULT_SHARED_RECEIVE_QUEUE_CREDITS;

    SharedReceiveQueueSettings() {
    }

    /**
     * @param enabled true to receive through one shared receive queue per I/O thread and device
     *                instead of one receive queue per connection; default false. Either side may
     *                enable it on its own: the peer sees only credits.
     * @return this
     */
    public SharedReceiveQueueSettings enabled(boolean enabled) {
        this.enabled = enabled;
        return this;
    }

    /**
     * @param n chunk-sized receives first posted to each shared receive queue (one per I/O thread
     *          and device), whatever the number of connections, in [1, 65536]; default 64, that is
     *          64 x 256 KiB = 16 MiB
     * @return this
     */
    public SharedReceiveQueueSettings depth(int n) {
        this.depth = n;
        return this;
    }

    /**
     * @param n the most receives a shared receive queue grows to when fewer than a quarter of its
     *          receives remain posted, in [{@link #depth}, 65536] and at most
     *          {@link PollingSettings#completionQueueSize}; default 256 (64 MiB with 256 KiB chunks)
     * @return this
     */
    public SharedReceiveQueueSettings maxDepth(int n) {
        this.maxDepth = n;
        return this;
    }

    /**
     * @param n data messages each peer may send before this side returns credits, in [1, 4096];
     *          default 8. The queue is shared, not reserved: connections x credits may exceed its
     *          depth, and then a burst from every peer at once can find it empty (the peer's
     *          device retries after an RNR NAK; see docs/rdma.md).
     * @return this
     */
    public SharedReceiveQueueSettings credits(int n) {
        this.credits = n;
        return this;
    }

    /** @return true when receiving through shared receive queues */
    public boolean enabled() {
        return enabled;
    }

    /** @return receives first posted to each shared receive queue */
    public int depth() {
        return depth;
    }

    /** @return the most receives a shared receive queue grows to */
    public int maxDepth() {
        return maxDepth;
    }

    /** @return credits granted to each peer */
    public int credits() {
        return credits;
    }

    void check() {
        if (depth < 1 || depth > 65536) {
            throw new IllegalArgumentException("sharedReceiveQueue.depth must be in [1, 65536]: " + depth);
        }
        if (maxDepth < depth || maxDepth > 65536) {
            throw new IllegalArgumentException("sharedReceiveQueue.maxDepth must be in [sharedReceiveQueue.depth ("
                    + depth + "), 65536]: " + maxDepth);
        }
        if (credits < 1 || credits > 4096) {
            throw new IllegalArgumentException("sharedReceiveQueue.credits must be in [1, 4096]: " + credits);
        }
    }

    /** @return an independent copy */
    public SharedReceiveQueueSettings copy() {
        SharedReceiveQueueSettings c = new SharedReceiveQueueSettings();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
