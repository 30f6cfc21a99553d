package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.LoopSettings;
import java.util.function.Consumer;

/**
 * The completion queues the I/O threads poll ({@code rdmarpc.rdma.polling.*}). Held by an
 * {@link RdmaConfig}, edited through {@link RdmaConfig#polling(Consumer)}. The settings every event
 * loop has, TCP's too (idle strategy, tick intervals, CPUs), are {@link LoopSettings}, edited through
 * {@link RdmaConfig#loop(Consumer)}; this group holds them so that their properties keep the names
 * {@code rdmarpc.rdma.polling.<setting>}.
 */
public final class PollingSettings {
    static final SettingsTable<PollingSettings> SETTINGS = new SettingsTable<PollingSettings>("Polling", "rdmarpc.rdma.polling.")
            .addFrom(LoopSettings.settingsTable(), "idleStrategy", PollingSettings::loop)
            .add("completionQueueSize", SettingsTable::parseInt, PollingSettings::completionQueueSize, PollingSettings::completionQueueSize)
            .addFrom(LoopSettings.settingsTable(), "tickInterval", PollingSettings::loop)
            .addFrom(LoopSettings.settingsTable(), "idleTickInterval", PollingSettings::loop)
            .addFrom(LoopSettings.settingsTable(), "ioThreadCpus", PollingSettings::loop);

    private final LoopSettings loop = new LoopSettings("polling.", 1, 256);
    private int completionQueueSize = RdmaConfig.DEFAULT_COMPLETION_QUEUE_SIZE;

    PollingSettings() {
    }

    /** @return the I/O threads' settings ({@link RdmaConfig#loop()} hands them out) */
    LoopSettings loop() {
        return loop;
    }

    /**
     * @param entries size of each of the two completion queues (send, receive) of an I/O thread,
     *                in [64, 1048576]; default 4096. It bounds how many connections one thread can
     *                carry: each reserves {@code receiveQueue.maxDepth + 3} receive entries and
     *                {@code send.window + 2} send entries.
     * @return this
     */
    public PollingSettings completionQueueSize(int entries) {
        this.completionQueueSize = entries;
        return this;
    }

    /** @return the completion queue size */
    public int completionQueueSize() {
        return completionQueueSize;
    }

    void check() {
        if (completionQueueSize < 64 || completionQueueSize > (1 << 20)) {
            throw new IllegalArgumentException("polling.completionQueueSize must be in [64, 1048576]: " + completionQueueSize);
        }
        loop.check();
    }

    /** @return an independent copy */
    public PollingSettings copy() {
        PollingSettings c = new PollingSettings();
        SETTINGS.copy(this, c);
        return c;
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
