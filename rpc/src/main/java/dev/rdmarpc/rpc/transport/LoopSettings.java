package dev.rdmarpc.rpc.transport;

import dev.rdmarpc.rpc.settings.CpuList;
import dev.rdmarpc.rpc.settings.SettingsTable;
import java.time.Duration;
import java.util.Objects;

/**
 * How many I/O threads (event loops) a transport runs, where, and how they wait and tick: the one
 * declaration of these settings, shared by the TCP and the RDMA transport. Each transport's
 * configuration holds one, edited in place through its {@code loop} method:
 *
 * {@snippet :
 * new TcpConfig().loop(l -> l.ioThreads(2).idleStrategy(IdleStrategy.event()).ioThreadCpus(2, 3));
 * new RdmaConfig().loop(l -> l.idleStrategy(IdleStrategy.busyPoll()).tickInterval(Duration.ofMillis(5)));
 * }
 *
 * <p>Their system properties keep each transport's names: {@code rdmarpc.tcp.<setting>};
 * {@code rdmarpc.rdma.ioThreads} and {@code rdmarpc.rdma.polling.<setting>} for the others. Not
 * thread-safe: set it up before the transport is created, which copies it.
 */
public final class LoopSettings {
    /** Default tick period (call timeouts are swept on it): 10 ms. */
    public static final Duration DEFAULT_TICK_INTERVAL = Duration.ofMillis(10);
    /** Default tick period of an I/O thread with no traffic and nothing to time: 250 ms. */
    public static final Duration DEFAULT_IDLE_TICK_INTERVAL = Duration.ofMillis(250);

    private static final SettingsTable<LoopSettings> SETTINGS = new SettingsTable<LoopSettings>("LoopSettings", "")
            .add("ioThreads", SettingsTable::parseInt, LoopSettings::ioThreads, LoopSettings::ioThreads)
            .add("tickInterval", SettingsTable::parseDuration, LoopSettings::tickInterval, LoopSettings::tickInterval)
            .add("idleTickInterval", SettingsTable::parseDuration, LoopSettings::idleTickInterval,
                    LoopSettings::idleTickInterval)
            .add("idleStrategy", IdleStrategy::parse, LoopSettings::idleStrategy, LoopSettings::idleStrategy)
            .add("ioThreadCpus", CpuList::parse, LoopSettings::cpuList, LoopSettings::cpuList);

    private final String path;
    private final int maxIoThreads;
    private int ioThreads;
    private IdleStrategy idleStrategy = IdleStrategy.adaptive();
    private CpuList ioThreadCpus = CpuList.NONE;
    private Duration tickInterval = DEFAULT_TICK_INTERVAL;
    private Duration idleTickInterval = DEFAULT_IDLE_TICK_INTERVAL;

    /**
     * The defaults (a configuration applies its system properties to it).
     *
     * @param path             how error messages name these settings but {@code ioThreads} within
     *                         their configuration: {@code ""} for TCP's ({@code tickInterval}),
     *                         {@code "polling."} for RDMA's ({@code polling.tickInterval})
     * @param defaultIoThreads the transport's default number of I/O threads
     * @param maxIoThreads     the most I/O threads the transport accepts
     */
    public LoopSettings(String path, int defaultIoThreads, int maxIoThreads) {
        this.path = Objects.requireNonNull(path, "path");
        this.ioThreads = defaultIoThreads;
        this.maxIoThreads = maxIoThreads;
    }

    /**
     * @return the table of these settings, for a configuration class of this module that holds them
     *         (each of its entries can stand in that class's own table under the class's prefix)
     */
    public static SettingsTable<LoopSettings> settingsTable() {
        return SETTINGS;
    }

    /**
     * @param n number of I/O threads, each an event loop with its own connections (on RDMA, with its
     *          own completion queues too); TCP: in [1, 1024], default the number of cores; RDMA: in
     *          [1, 256], default 1. Property form: {@code -Drdmarpc.tcp.ioThreads=2},
     *          {@code -Drdmarpc.rdma.ioThreads=2}
     * @return this
     */
    public LoopSettings ioThreads(int n) {
        this.ioThreads = n;
        return this;
    }

    /** @return the number of I/O threads */
    public int ioThreads() {
        return ioThreads;
    }

    /**
     * @param idle what an I/O thread does when it finds nothing to do; default
     *             {@link IdleStrategy#adaptive()}: poll while the next event is likely within a learnt
     *             spin (at most 2 ms: a response awaited, or traffic at a pace it has learnt), then
     *             block (TCP: in the selector; RDMA: on the completion channel). Waking a blocked
     *             thread costs tens of microseconds on virtual machines, more than a loopback round
     *             trip; spinning through short waits saves it, at about the same CPU time per call
     *             under load (docs/performance-archive.md, section 1d). An idle connection costs it no
     *             more than {@link IdleStrategy#event()} (blocking at once), but it spins through every
     *             gap between calls shorter than its most spin: calls a millisecond apart kept a TCP
     *             client's and server's I/O thread spinning, most of a core between them, against a
     *             seventh of one with {@code event} ({@link IdleStrategy} has the figures). Choose
     *             {@code event} where CPU matters more than latency under sparse traffic, or where
     *             client and server share few cores; {@link IdleStrategy#backOff} or
     *             {@link IdleStrategy#busyPoll()} (lowest latency, one core per I/O thread) where each
     *             side has cores of its own. On RDMA, {@code event} wakes once per burst, because only
     *             the last message of a burst asks for an event (solicited events, which every sender
     *             sets whatever its own mode, so any pairing of modes works).
     * @return this
     */
    public LoopSettings idleStrategy(IdleStrategy idle) {
        this.idleStrategy = Objects.requireNonNull(idle, "idle");
        return this;
    }

    /** @return what an I/O thread does when idle */
    public IdleStrategy idleStrategy() {
        return idleStrategy;
    }

    /**
     * @param interval period of the connections' ticks ({@link FrameHandler#onTick}: call timeouts),
     *                 in [1 ms, 60 s]; default 10 ms (the granularity of call timeouts)
     * @return this
     */
    public LoopSettings tickInterval(Duration interval) {
        this.tickInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    /** @return the tick interval */
    public Duration tickInterval() {
        return tickInterval;
    }

    /**
     * @param interval period of the ticks of an I/O thread that has had no traffic for this long and
     *                 has nothing to time (no call waiting with a deadline, no ping or ping timeout
     *                 due within this interval, no frame half received, no write backed up, no
     *                 handshake, no close under way), in [1 ms, 60 s]; default 250 ms. Each tick wakes
     *                 an idle thread: with 10 ms ticks throughout an idle RDMA connection cost
     *                 6.1-6.5 % of a core per side in the Soft-RoCE VM, with idle ticks 0.4-0.6 %
     *                 (RdmaIdleCostTest). The first traffic brings {@link #tickInterval} back at once.
     *                 Idle timeouts then fire within this interval of their due time. An RDMA
     *                 connection's TCP liveness channel ticks at the same two intervals, at the idle one
     *                 while calls wait too, except within an idle tick of its ping or of the ping's
     *                 timeout ({@code TcpConfig#pingInterval}). At most {@link #tickInterval}
     *                 turns idle ticks off.
     * @return this
     */
    public LoopSettings idleTickInterval(Duration interval) {
        this.idleTickInterval = Objects.requireNonNull(interval, "interval");
        return this;
    }

    /** @return the tick period of an idle I/O thread */
    public Duration idleTickInterval() {
        return idleTickInterval;
    }

    /**
     * @param cpus the CPUs the I/O threads run on: thread {@code i} is pinned to
     *             {@code cpus[i % cpus.length]} ({@code sched_setaffinity}, Linux only); none (the
     *             default) leaves them to the scheduler. Each must be a CPU the thread creating the
     *             transport may run on, or the transport refuses to start. Meant for threads that spin
     *             ({@link IdleStrategy#busyPoll()}, {@link IdleStrategy#backOff}, the adaptive mode
     *             under steady traffic), each on a core kept free for it: two spinning threads on one
     *             core take turns a time slice at a time. It pays only where the cores are spare; in
     *             the Soft-RoCE VM, whose 2 vCPUs carry both JVMs and rxe, pinning the I/O threads did
     *             not shorten the busy-poll round trip and pinning each whole JVM to a vCPU
     *             ({@code taskset}) did (docs/performance-archive.md, section 4). Property form:
     *             {@code -Drdmarpc.tcp.ioThreadCpus=2,3}, {@code -Drdmarpc.rdma.polling.ioThreadCpus=2,3}
     * @return this
     */
    public LoopSettings ioThreadCpus(int... cpus) {
        this.ioThreadCpus = CpuList.of(path + "ioThreadCpus", cpus);
        return this;
    }

    /** @return the CPUs the I/O threads are pinned to (empty: not pinned) */
    public int[] ioThreadCpus() {
        return ioThreadCpus.cpus();
    }

    /** @return the CPU I/O thread {@code index} is pinned to, -1 for none */
    public int ioThreadCpu(int index) {
        return ioThreadCpus.cpuOf(index);
    }

    private CpuList cpuList() {
        return ioThreadCpus;
    }

    private void cpuList(CpuList cpus) {
        this.ioThreadCpus = cpus;
    }

    /**
     * Validates the settings; the configuration that holds them calls it from its own validation.
     *
     * @throws IllegalArgumentException naming the first bad setting
     */
    public void check() {
        if (ioThreads < 1 || ioThreads > maxIoThreads) {
            throw new IllegalArgumentException("ioThreads must be in [1, " + maxIoThreads + "]: " + ioThreads);
        }
        if (tickInterval.toMillis() < 1 || tickInterval.toSeconds() > 60) {
            throw new IllegalArgumentException(path + "tickInterval must be in [1 ms, 60 s]: " + tickInterval);
        }
        if (idleTickInterval.toMillis() < 1 || idleTickInterval.toSeconds() > 60) {
            throw new IllegalArgumentException(path + "idleTickInterval must be in [1 ms, 60 s]: " + idleTickInterval);
        }
    }

    /** Copies every setting of {@code from} here. */
    public void copyFrom(LoopSettings from) {
        SETTINGS.copy(from, this);
    }

    @Override
    public String toString() {
        return SETTINGS.toString(this);
    }
}
