package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.settings.SettingsTable;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.LoopSettings;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * How the I/O threads wait for completions and how often they tick ({@code rdmarpc.rdma.polling.*}).
 * Held by an {@link RdmaConfig}, edited through {@link RdmaConfig#polling(Consumer)}. The settings
 * every event loop has, TCP's too (idle strategy, tick intervals, CPUs), are declared once, by
 * {@link LoopSettings}: its {@link #loop()} holds them and the setters here set them there.
 */
public final class PollingSettings {
    static final SettingsTable<PollingSettings> SETTINGS = new SettingsTable<PollingSettings>("Polling", "rdmarpc.rdma.polling.")
            .addFrom(LoopSettings.settingsTable(), "idleStrategy", PollingSettings::loop)
            .add("completionQueueSize", SettingsTable::parseInt, PollingSettings::completionQueueSize, PollingSettings::completionQueueSize)
            .addFrom(LoopSettings.settingsTable(), "tickInterval", PollingSettings::loop)
            .addFrom(LoopSettings.settingsTable(), "idleTickInterval", PollingSettings::loop)
            .addFrom(LoopSettings.settingsTable(), "ioThreadCpus", PollingSettings::loop);

    private final LoopSettings loop = new LoopSettings("polling.");
    private int completionQueueSize = RdmaConfig.DEFAULT_COMPLETION_QUEUE_SIZE;

    PollingSettings() {
    }

    /** @return how the I/O threads wait and tick: this configuration's own */
    public LoopSettings loop() {
        return loop;
    }

    /**
     * @param idle see {@link LoopSettings#idleStrategy(IdleStrategy)}
     * @return this
     */
    public PollingSettings idleStrategy(IdleStrategy idle) {
        loop.idleStrategy(idle);
        return this;
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

    /**
     * @param interval see {@link LoopSettings#tickInterval(Duration)}
     * @return this
     */
    public PollingSettings tickInterval(Duration interval) {
        loop.tickInterval(interval);
        return this;
    }

    /**
     * @param interval see {@link LoopSettings#idleTickInterval(Duration)}
     * @return this
     */
    public PollingSettings idleTickInterval(Duration interval) {
        loop.idleTickInterval(interval);
        return this;
    }

    /**
     * @param cpus see {@link LoopSettings#ioThreadCpus(int...)}
     * @return this
     */
    public PollingSettings ioThreadCpus(int... cpus) {
        loop.ioThreadCpus(cpus);
        return this;
    }

    /** @return the CPUs the I/O threads are pinned to (empty: not pinned) */
    public int[] ioThreadCpus() {
        return loop.ioThreadCpus();
    }

    /** @return the tick period of an idle I/O thread */
    public Duration idleTickInterval() {
        return loop.idleTickInterval();
    }

    /** @return how I/O threads wait for completions */
    public IdleStrategy idleStrategy() {
        return loop.idleStrategy();
    }

    /** @return the CPU of I/O thread {@code index}, -1 for none ({@link LoopSettings#ioThreadCpu}) */
    int ioThreadCpu(int index) {
        return loop.ioThreadCpu(index);
    }

    /** @return the completion queue size */
    public int completionQueueSize() {
        return completionQueueSize;
    }

    /** @return the tick interval */
    public Duration tickInterval() {
        return loop.tickInterval();
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
