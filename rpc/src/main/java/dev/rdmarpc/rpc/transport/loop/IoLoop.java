package dev.rdmarpc.rpc.transport.loop;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.LoopSettings;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * One I/O thread, the same for both transports: it owns the thread, the task queue, the wake-up
 * protocol, the list of connections to flush, the ticks, the idle strategy and shutdown. What is
 * transport-specific (a selector, completion queues) sits behind a {@link Poller}.
 *
 * <p>Each iteration: poll (without blocking while there is work or while the idle strategy spins;
 * else block until an event, a wake-up or the next tick), run up to {@value #TASK_BUDGET} tasks from
 * other threads, flush every connection that committed frames, and every tick interval tick the
 * poller's connections, flush again and trim the buffer pool.
 *
 * <p>Traffic is an event handled, a task run or a flush asked for by another thread. An
 * {@link IdleStrategy.Mode#ADAPTIVE} loop times each idle stretch, from the end of one iteration
 * with traffic to the poll that finds the next, and lets {@link AdaptiveSpin} decide from those how
 * long to poll before blocking; a wake-up for a tick is not traffic and starts no spin.
 *
 * <p>Idle ticks: with an idle tick interval longer than the tick interval, a loop that has had no
 * traffic (no event, no task, no flush asked for by another thread) for one idle tick interval, and whose poller has nothing to time
 * ({@link Poller#hasTimedWork()}: no call waiting with a deadline, no handshake, no close under way),
 * ticks at the idle interval instead: every wake-up of an idle thread costs CPU, and under
 * emulation a lot of it. The first traffic brings the next tick back within one tick interval.
 *
 * <p>Wake-up: {@link #awake} is true while the thread runs (or a wake-up is pending), so producers
 * wake the poller only when the thread is about to block or blocked. Before blocking, the thread
 * clears the flag, then looks for work once more; the poller arms what it must and polls once more
 * (completion queues signal only new completions), so nothing slips between the last look and the
 * block.
 */
public final class IoLoop implements Runnable {
    private static final System.Logger LOG = System.getLogger(IoLoop.class.getName());
    /** Most tasks run per iteration, so that tasks cannot starve I/O. */
    public static final int TASK_BUDGET = 1024;

    /** The transport's side of an I/O thread. Every method but {@link #wake} runs on the thread. */
    public interface Poller {
        /**
         * Handles what is ready without blocking.
         *
         * @return the events handled
         */
        int pollNow();

        /**
         * Blocks until an event, a {@link #wake} or {@code timeoutMillis}, after arming whatever must
         * be armed and polling once more.
         *
         * @return the events handled (0 when it only woke up)
         */
        int await(long timeoutMillis);

        /** Makes a blocked (or the next) {@link #await} return at once. Any thread. */
        void wake();

        /** Periodic work: call timeouts, liveness, reaping. */
        void tick(long nowNanos);

        /** The loop stops: close every connection and free the poller's resources. */
        void close();

        /**
         * @return true while something on this loop must be timed at the full tick rate (calls with
         *         deadlines, handshakes, closes); false lets an idle loop tick at its idle interval.
         *         Default: true
         */
        default boolean hasTimedWork() {
            return true;
        }

        /**
         * @return true when the loop should poll once more before it blocks, so that a steady stream
         *         of events never pays for arming (completion queues: arming is a system call);
         *         false where blocking finds ready events as cheaply (a selector)
         */
        default boolean pollsBeforeBlocking() {
            return false;
        }

        /**
         * Asked once per idle stretch by an {@link IdleStrategy.Mode#ADAPTIVE} loop, which learns
         * stretches with calls in flight apart from those without.
         *
         * @return true while a call on this loop awaits its response (a client's calls) or its
         *         handler (a server's); default false
         */
        default boolean hasCallsInFlight() {
            return false;
        }

        /** Whether any of {@code connections} passes {@code test}; allocates nothing (a lambda capturing nothing). */
        static <C> boolean any(List<C> connections, Predicate<? super C> test) {
            for (int i = 0; i < connections.size(); i++) {
                if (test.test(connections.get(i))) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A connection whose committed frames go out at the end of the iteration. */
    public interface Flushable {
        /** Writes (posts) what was committed. Runs on the I/O thread. */
        void flush();
    }

    private final Thread thread;
    private final IdleStrategy.Mode idleMode;
    private final long spinNanos;
    private final long tickNanos;
    private final long idleTickNanos;
    /** The spin decision of an {@link IdleStrategy.Mode#ADAPTIVE} loop; null for the other modes. */
    private final AdaptiveSpin adaptive;
    /** Adaptive: an idle stretch has begun (the loop found nothing to do since the last traffic). */
    private boolean stretchOpen;
    /** Adaptive: the open stretch began with calls in flight. */
    private boolean stretchInFlight;
    /** Adaptive: how long the open stretch is polled before blocking. */
    private long stretchSpin;
    private final BufferPool pool;
    private Poller poller;
    private boolean pollBeforeBlocking;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** True while the thread runs (or a wake-up is already pending): producers need not wake it. */
    private final AtomicBoolean awake = new AtomicBoolean(true);
    private volatile boolean running = true;

    // Cross-thread flush requests (guarded by remoteLock); swapped with remoteDrain by the thread.
    private final Object remoteLock = new Object();
    private Flushable[] remoteFlush = new Flushable[16];
    private int remoteCount;
    private volatile boolean remotePending;
    private Flushable[] remoteDrain = new Flushable[16];

    /** The CPU the thread pins itself to as it starts; -1: none. */
    private int cpu = -1;

    // Thread state.
    private Flushable[] localFlush = new Flushable[16];
    private int localCount;
    private long nextTick;
    private long lastActivity;
    /** When the last event was handled or task ran (a wake-up for a tick is not traffic). */
    private long lastTraffic;

    /** A loop with a transport's {@link LoopSettings} (but the CPU: the transport gives it, {@link #pinTo}). */
    public IoLoop(String name, LoopSettings settings, BufferPool pool) {
        this(name, settings.idleStrategy(), settings.tickInterval().toNanos(), settings.idleTickInterval().toNanos(), pool);
    }

    /**
     * @param name         the thread's name
     * @param idle         what the thread does when idle
     * @param tickNanos    the tick interval
     * @param pool         the buffer pool trimmed on ticks
     */
    public IoLoop(String name, IdleStrategy idle, long tickNanos, BufferPool pool) {
        this(name, idle, tickNanos, tickNanos, pool);
    }

    /**
     * @param name          the thread's name
     * @param idle          what the thread does when idle
     * @param tickNanos     the tick interval
     * @param idleTickNanos the tick interval of a loop with no traffic and nothing to time; at most
     *                      {@code tickNanos} turns idle ticks off
     * @param pool          the buffer pool trimmed on ticks
     */
    public IoLoop(String name, IdleStrategy idle, long tickNanos, long idleTickNanos, BufferPool pool) {
        this.idleMode = idle.mode();
        this.spinNanos = idle.spin().toNanos();
        this.adaptive = idleMode == IdleStrategy.Mode.ADAPTIVE ? new AdaptiveSpin(spinNanos) : null;
        this.tickNanos = tickNanos;
        this.idleTickNanos = Math.max(tickNanos, idleTickNanos);
        this.pool = pool;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(false);
    }

    /**
     * Pins the thread, once started, to {@code cpu} ({@link CpuAffinity}); -1 (the default) leaves it
     * to the scheduler. Call before {@link #start}; a CPU the kernel refuses is logged and the thread
     * runs unpinned (check the CPUs with {@link #checkCpus} first).
     */
    public void pinTo(int cpu) {
        this.cpu = cpu;
    }

    /**
     * @throws IllegalArgumentException naming {@code setting} when a CPU of {@code cpus} is not one the
     *                                  calling thread may run on (the threads it starts inherit its
     *                                  CPUs), or pinning is not supported here
     */
    public static void checkCpus(int[] cpus, String setting) {
        if (cpus.length == 0) {
            return;
        }
        if (!CpuAffinity.isSupported()) {
            throw new IllegalArgumentException(setting + " pins I/O threads to CPUs, which needs Linux (os.name "
                    + System.getProperty("os.name") + ")");
        }
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        for (int c : cpus) {
            if (!allowed.contains(c)) {
                throw new IllegalArgumentException(setting + " names CPU " + c + ", which the thread creating the"
                        + " transport may not run on (it may use " + allowed + ")");
            }
        }
    }

    /** Starts the thread with {@code p} as its poller. */
    public void start(Poller p) {
        this.poller = p;
        this.pollBeforeBlocking = p.pollsBeforeBlocking();
        thread.start();
    }

    /** @return the thread's name */
    public String name() {
        return thread.getName();
    }

    /** @return true on this loop's thread */
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** @return the tick interval in nanoseconds */
    public long tickNanos() {
        return tickNanos;
    }

    /** @return true until the thread has ended */
    public boolean isAlive() {
        return thread.isAlive();
    }

    /** Runs {@code task} on the thread (at once, when called on it). */
    public void execute(Runnable task) {
        if (inLoop()) {
            task.run();
            return;
        }
        tasks.add(task);
        wakeup();
    }

    /** Queues {@code task} for the thread even when called on it (it runs after the current event). */
    public void executeLater(Runnable task) {
        tasks.add(task);
        if (!inLoop()) {
            wakeup();
        }
    }

    /** Wakes the thread if it blocks. Any thread. */
    public void wakeup() {
        if (awake.compareAndSet(false, true) && running) {
            poller.wake();
        }
    }

    /** {@code c} committed frames: flush it at the end of this (or the next) iteration. Any thread. */
    public void flushLater(Flushable c) {
        if (inLoop()) {
            if (localCount == localFlush.length) {
                localFlush = Arrays.copyOf(localFlush, localCount * 2);
            }
            localFlush[localCount++] = c;
            return;
        }
        synchronized (remoteLock) {
            if (remoteCount == remoteFlush.length) {
                remoteFlush = Arrays.copyOf(remoteFlush, remoteCount * 2);
            }
            remoteFlush[remoteCount++] = c;
            remotePending = true;
        }
        wakeup();
    }

    /** Stops the thread; the poller closes everything on it. */
    public void shutdown() {
        running = false;
        poller.wake();
    }

    /** Waits up to {@code millis} for the thread to end (returns at once on the thread itself). */
    public void join(long millis) throws InterruptedException {
        if (!inLoop()) {
            thread.join(millis);
        }
    }

    @Override
    public void run() {
        if (cpu >= 0) {
            try {
                CpuAffinity.pinCurrentThread(cpu);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "I/O thread " + thread.getName() + " runs unpinned: " + e.getMessage());
            }
        }
        nextTick = System.nanoTime() + tickNanos;
        lastActivity = System.nanoTime();
        lastTraffic = lastActivity;
        try {
            while (running) {
                try {
                    iterate();
                } catch (Throwable t) {
                    // One bad event must not stop the thread serving every other connection.
                    LOG.log(System.Logger.Level.ERROR, "I/O thread " + thread.getName() + " caught an unexpected error", t);
                }
            }
        } finally {
            poller.close();
        }
    }

    private boolean hasWork() {
        return !tasks.isEmpty() || remotePending || localCount > 0;
    }

    private void iterate() {
        int events;
        if (hasWork()) {
            events = poller.pollNow();
        } else if (adaptive != null) {
            events = adaptiveIdle();
        } else if (idleMode == IdleStrategy.Mode.BUSY_POLL) {
            events = poller.pollNow();
            if (events == 0) {
                Thread.onSpinWait();
            }
        } else if (idleMode == IdleStrategy.Mode.BACK_OFF && System.nanoTime() - lastActivity < spinNanos) {
            events = poller.pollNow();
            if (events == 0) {
                Thread.yield(); // a peer sharing this core gets to run and produce the event we wait for
            }
        } else {
            events = block();
        }
        long polled = stretchOpen && events > 0 ? System.nanoTime() : 0;
        boolean tasksRan = runTasks();
        boolean remoteFlushed = flushAll();
        long now = System.nanoTime();
        if (events > 0 || tasksRan || remoteFlushed) {
            if (stretchOpen) {
                adaptive.stretchEnded((polled != 0 ? polled : now) - lastTraffic, stretchInFlight);
                stretchOpen = false;
            }
            lastActivity = now;
            lastTraffic = now;
            if (nextTick - now > tickNanos) {
                nextTick = now + tickNanos; // traffic again: back to the full tick rate at once
            }
        }
        if (now - nextTick >= 0) {
            nextTick = now + (idleTicks(now) ? idleTickNanos : tickNanos);
            poller.tick(now);
            flushAll();
            pool.trim(now);
        }
    }

    /**
     * Adaptive, with nothing to do: opens the idle stretch (asking once whether calls are in flight),
     * then polls until the stretch is older than its spin, then blocks.
     */
    private int adaptiveIdle() {
        if (!stretchOpen) {
            stretchOpen = true;
            stretchInFlight = poller.hasCallsInFlight();
            stretchSpin = adaptive.spinNanos(stretchInFlight);
        }
        if (System.nanoTime() - lastTraffic < stretchSpin) {
            int events = poller.pollNow();
            if (events == 0) {
                Thread.yield(); // a peer sharing this core gets to run and produce the event we wait for
            }
            return events;
        }
        return block();
    }

    /** No traffic for an idle tick interval and nothing to time: tick at the idle interval. */
    private boolean idleTicks(long now) {
        return idleTickNanos > tickNanos && now - lastTraffic >= idleTickNanos && !poller.hasTimedWork();
    }

    private int block() {
        if (pollBeforeBlocking) {
            int events = poller.pollNow();
            if (events > 0) {
                return events;
            }
        }
        awake.set(false);
        if (hasWork() || !running) {
            awake.set(true);
            return poller.pollNow();
        }
        long timeout = Math.max(1, Math.min(1000, (nextTick - System.nanoTime()) / 1_000_000L));
        int events = poller.await(timeout);
        awake.set(true);
        lastActivity = System.nanoTime();
        return events;
    }

    /**
     * Runs queued tasks, at most {@value #TASK_BUDGET}.
     *
     * @return true when one ran
     */
    public boolean runTasks() {
        Runnable r;
        int budget = TASK_BUDGET;
        while (budget > 0 && (r = tasks.poll()) != null) {
            budget--;
            try {
                r.run();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "task on I/O thread " + thread.getName() + " failed", t);
            }
        }
        return budget < TASK_BUDGET;
    }

    /** @return true when another thread had asked for a flush (traffic) */
    private boolean flushAll() {
        boolean remote = remotePending;
        if (remote) {
            int n;
            Flushable[] drain;
            synchronized (remoteLock) {
                drain = remoteFlush;
                n = remoteCount;
                remoteFlush = remoteDrain;
                remoteCount = 0;
                remotePending = false;
            }
            remoteDrain = drain;
            for (int i = 0; i < n; i++) {
                flush(drain[i]);
                drain[i] = null;
            }
        }
        flushCommitted();
        return remote;
    }

    /**
     * Flushes now every connection that committed frames on this thread, rather than at the end of
     * the iteration: a poller calls it after each ready connection, so that the responses to one
     * connection's requests leave before the next connection is read (the peer works on them while
     * this thread reads on). Loop thread only.
     */
    public void flushCommitted() {
        // Flushing can run code paths that commit more (rare): loop until quiet.
        while (localCount > 0) {
            int n = localCount;
            localCount = 0;
            for (int i = 0; i < n; i++) {
                Flushable c = localFlush[i];
                localFlush[i] = null;
                flush(c);
            }
        }
    }

    private void flush(Flushable c) {
        try {
            c.flush();
        } catch (RuntimeException e) {
            // the connection handles its own failures; one that escapes must not cost the others their flush
            LOG.log(System.Logger.Level.ERROR, "flushing " + c + " on I/O thread " + thread.getName() + " failed", e);
        }
    }
}
