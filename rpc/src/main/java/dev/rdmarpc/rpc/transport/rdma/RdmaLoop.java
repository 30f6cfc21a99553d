package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import dev.rdmarpc.rpc.transport.loop.SocketPoller;
import dev.rdmarpc.rpc.transport.stream.PolledListener;
import dev.rdmarpc.rpc.transport.stream.SocketGroup;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * RDMA's side of one {@link IoLoop} (one I/O thread): a send and a receive completion queue per
 * device it serves (with their completion channel), and the connections assigned to it.
 *
 * <p>Polling drains the completion queues (up to {@value #POLL_BATCH} completions at a time) and
 * dispatches each completion by its work request id to its connection; what handlers commit during
 * an iteration is posted at its end ({@link #scheduleFlush}). Before the thread blocks, the receive
 * queues are armed for solicited completions only (the last message of each burst), the send queues
 * only when a connection waits for its window; then the queues are polled once more (nothing slips
 * between poll and arm) and the thread sleeps in {@code poll(2)} on the channels and an eventfd.
 * The {@link dev.rdmarpc.rpc.transport.IdleStrategy} decides when it blocks.
 *
 * <p>A completion names its connection by its work request id ({@link WorkRequestId}: index and
 * generation in the {@link ConnectionTable}), or, from a shared receive queue, by its QP number.
 */
final class RdmaLoop implements IoLoop.Poller {
    private static final System.Logger LOG = System.getLogger(RdmaLoop.class.getName());
    static final int POLL_BATCH = 32;

    final RdmaTransport transport;
    final RdmaConfig config;
    final RdmaMetrics metrics;
    final BufferPool pool;
    private final IoLoop io;
    private final Wakeup wakeup;
    /** Its TCP connections: hellos (then liveness channels) and plain TCP clients, polled beside the channels. */
    private final PolledListener.SocketLoop sockets;

    // devices: created by setup threads; the loop learns of them through attach tasks
    private final LoopDevices devices;

    // connection table: indexes reserved by setup threads, slots filled and read on the loop thread
    final ConnectionTable table = new ConnectionTable();

    // loop-thread state
    private final WorkCompletions wc;
    private final LoopDevice[] active = new LoopDevice[DeviceTable.MAX_DEVICES];
    private int activeCount;
    private final int[] fds = new int[DeviceTable.MAX_DEVICES];
    private final boolean[] ready = new boolean[DeviceTable.MAX_DEVICES];
    private final List<RdmaConnection> connections = new ArrayList<>();
    private final List<RdmaConnection> drainingList = new ArrayList<>();

    /** @param cpu the CPU the thread pins itself to, -1 for none */
    RdmaLoop(RdmaTransport transport, String name, int cpu) {
        this.transport = transport;
        this.config = transport.rdmaConfig();
        this.metrics = transport.metrics();
        this.pool = transport.bufferPool();
        this.devices = new LoopDevices(config, pool, metrics);
        this.wc = new WorkCompletions(POLL_BATCH);
        this.io = new IoLoop(name, config.loop(), pool);
        SocketPoller poller = new SocketPoller(io::flushCommitted);
        this.sockets = new PolledListener.SocketLoop(new SocketGroup(io, transport.socketPool(), transport.socketSettings(),
                transport.tlsFailures()), poller);
        this.wakeup = new Wakeup(poller);
        io.pinTo(cpu);
    }

    void start() {
        io.start(this);
    }

    boolean inLoop() {
        return io.inLoop();
    }

    /** @return its TCP connections and their poller */
    PolledListener.SocketLoop sockets() {
        return sockets;
    }

    // ================================================================== setup (any thread)

    /**
     * The completion queues for {@code device} on this loop (created on first use) with room
     * reserved for one more connection.
     *
     * @return the loop device, or null when its completion queues are full
     */
    LoopDevice reserve(DeviceTable.Device device, int recvCqEntries, int sendCqEntries) throws IOException {
        return devices.reserve(device, recvCqEntries, sendCqEntries);
    }

    void release(LoopDevice ld, int recvCqEntries, int sendCqEntries) {
        devices.release(ld, recvCqEntries, sendCqEntries);
    }

    /** @return registered bytes of this loop's shared receive queues (0 without them) */
    long sharedReceiveBytes() {
        return devices.sharedReceiveBytes();
    }

    /**
     * The device reported the limit of {@code srq} (async event thread): if it is one of this
     * loop's, it grows on the loop.
     */
    void sharedReceiveLimit(dev.rdmarpc.ibverbs.verbs.SharedReceiveQueue srq) {
        LoopDevice owner = devices.ownerOf(srq);
        if (owner != null) {
            LoopDevice ld = owner;
            execute(() -> {
                SharedReceives s = ld.shared;
                if (s != null && s.srq == srq) {
                    s.limitReached();
                }
            });
        }
    }

    /** @return completion queue entries reserved on this loop (a load measure) */
    int load() {
        return devices.load();
    }

    /**
     * Hands a connected connection to the loop and its frames to {@code handler}; runs on the loop.
     * Its receives were posted already; no completion can come before the peer learns our QP.
     */
    void attach(RdmaConnection c, FrameHandler handler) {
        table.put(c);
        connections.add(c);
        LoopDevice ld = c.loopDevice;
        boolean known = false;
        for (int i = 0; i < activeCount; i++) {
            known |= active[i] == ld;
        }
        if (!known) {
            active[activeCount] = ld;
            fds[activeCount] = ld.channel.fd();
            activeCount++;
        }
        c.attached(handler);
    }

    /**
     * Closes the connections a failed port, device ({@code qp} null) or queue pair uses, with
     * {@code reason}: their calls fail at once. Loop thread.
     */
    void fail(DeviceTable.Device device, QueuePair qp, String reason) {
        for (int i = connections.size() - 1; i >= 0; i--) {
            if (i >= connections.size()) {
                continue; // a close removed more than one
            }
            RdmaConnection c = connections.get(i);
            if (qp != null ? c.qp == qp : c.loopDevice.device == device) {
                c.closeNow(new IOException(reason));
            }
        }
    }

    /**
     * Closes the connections whose frames use {@code u}, with {@code reason}: a registration's close
     * waited its time out. Loop thread.
     */
    void closeHolding(DeviceTable.UserRegion u, String reason) {
        for (RdmaConnection c : List.copyOf(connections)) {
            if (!c.isClosing() && c.holds(u)) {
                c.closeNow(new IOException(reason));
            }
        }
    }

    /** The connection was destroyed; its table slot is free again (loop thread). */
    void detach(RdmaConnection c) {
        table.remove(c);
        connections.remove(c);
    }

    // ================================================================== cross-thread

    /** Runs {@code task} on the loop (now, when called on it). */
    void execute(Runnable task) {
        io.execute(task);
    }

    /** Queues {@code task} for the loop even when called on it (it runs after the current event). */
    void executeLater(Runnable task) {
        io.executeLater(task);
    }

    /** Wakes the loop if it sleeps. */
    void wakeup() {
        io.wakeup();
    }

    /** Posts {@code c}'s committed frames at the end of this iteration (loop thread). */
    void scheduleFlush(RdmaConnection c) {
        if (c.flushScheduled) {
            return;
        }
        c.flushScheduled = true;
        io.flushLater(c);
    }

    /** Lines describing this loop and its connections, gathered on the loop. */
    String diagnostics() {
        java.util.concurrent.CompletableFuture<String> f = new java.util.concurrent.CompletableFuture<>();
        execute(() -> {
            StringBuilder sb = new StringBuilder(io.name()).append(": ").append(connections.size())
                    .append(" connections, ").append(drainingList.size()).append(" draining");
            for (int i = 0; i < activeCount; i++) {
                sb.append(", ").append(active[i].device).append(" recvArmed ").append(active[i].recvArmed)
                        .append(" sendArmed ").append(active[i].sendArmed);
            }
            for (RdmaConnection c : connections) {
                sb.append("\n  ").append(c.diagnostics());
            }
            f.complete(sb.toString());
        });
        try {
            return f.get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            return io.name() + ": no answer (" + e + ")";
        }
    }

    /** {@code c} closed; destroy it once its posted work requests have been flushed (loop thread). */
    void draining(RdmaConnection c) {
        drainingList.add(c);
    }

    void shutdown() {
        io.shutdown();
    }

    void join(long millis) throws InterruptedException {
        io.join(millis);
    }

    boolean isAlive() {
        return io.isAlive();
    }

    // ================================================================== IoLoop.Poller (loop thread)

    @Override
    public int pollNow() {
        return pollAll() + wakeup.pollSocketsNow();
    }

    @Override
    public void tick(long now) {
        sockets.group().tick(now);
        transport.socketPool().trim(now); // the loop trims the registered pool; the sockets' own is trimmed here
        for (int i = connections.size() - 1; i >= 0; i--) {
            if (i < connections.size()) {
                connections.get(i).tick(now);
            }
        }
        reapDrained(now);
    }

    @Override
    public void wake() {
        wakeup.wake();
    }

    @Override
    public boolean hasTimedWork() {
        if (!drainingList.isEmpty() || sockets.group().hasTimedWork()) {
            return true;
        }
        return IoLoop.Poller.any(connections, RdmaConnection::hasTimedWork);
    }

    @Override
    public boolean hasCallsInFlight() {
        return sockets.group().hasCallsInFlight() || IoLoop.Poller.any(connections, c -> c.callsInFlight() > 0);
    }

    @Override
    public boolean pollsBeforeBlocking() {
        return true;
    }

    @Override
    public int await(long timeoutMillis) {
        for (int i = 0; i < activeCount; i++) {
            LoopDevice ld = active[i];
            if (!ld.recvArmed) {
                ld.recvCq.requestNotify(true);
                ld.recvArmed = true;
            }
            if (!ld.sendArmed && needsSendEvents(ld)) {
                ld.sendCq.requestNotify(false);
                ld.sendArmed = true;
            }
        }
        int n = pollAll();
        if (n > 0) {
            return n;
        }
        wakeup.await(fds, activeCount, (int) timeoutMillis, ready);
        metrics.wakeups.increment();
        for (int i = 0; i < activeCount; i++) {
            if (ready[i]) {
                LoopDevice ld = active[i];
                CompletionQueue fired;
                while ((fired = ld.channel.awaitEvent(0)) != null) {
                    if (fired == ld.recvCq) {
                        ld.recvArmed = false;
                    } else if (fired == ld.sendCq) {
                        ld.sendArmed = false;
                    }
                }
            }
        }
        return pollAll();
    }

    private boolean needsSendEvents(LoopDevice ld) {
        for (int i = 0; i < connections.size(); i++) {
            RdmaConnection c = connections.get(i);
            if (c.loopDevice == ld && c.needsSendEvents()) {
                return true;
            }
        }
        for (int i = 0; i < drainingList.size(); i++) {
            if (drainingList.get(i).loopDevice == ld) {
                return true;
            }
        }
        return false;
    }

    private int pollAll() {
        int total = 0;
        for (int d = 0; d < activeCount; d++) {
            LoopDevice ld = active[d];
            total += drain(ld, ld.recvCq); // receives first: an error there is the cause of flushed sends
            total += drain(ld, ld.sendCq);
            if (ld.shared != null) {
                ld.shared.refillIfLow();
            }
        }
        return total;
    }

    private int drain(LoopDevice ld, CompletionQueue cq) {
        int total = 0;
        int n;
        do {
            n = cq.poll(wc, POLL_BATCH);
            for (int i = 0; i < n; i++) {
                dispatch(ld, i);
            }
            total += n;
        } while (n == POLL_BATCH);
        return total;
    }

    private void dispatch(LoopDevice ld, int i) {
        long id = wc.wrId(i);
        int kind = WorkRequestId.kind(id);
        if (kind == WorkRequestId.SHARED_RECEIVE) {
            dispatchShared(ld.shared, WorkRequestId.slot(id), i);
            return;
        }
        RdmaConnection c = table.get(WorkRequestId.index(id));
        if (c == null || c.generationMismatch(WorkRequestId.generation(id))) {
            return; // a completion of a connection already destroyed
        }
        int slot = WorkRequestId.slot(id);
        if (kind == WorkRequestId.RECEIVE) {
            c.onReceive(slot, wc, i);
        } else {
            c.onSend(kind, slot, wc, i);
        }
    }

    /**
     * A receive of the shared queue completed: the completion's QP number names the connection. A
     * message for a connection that is closing or gone (destroyed before its completion was polled)
     * is dropped and its buffer posted again at once.
     */
    private void dispatchShared(SharedReceives shared, int slot, int i) {
        shared.completed();
        RdmaConnection c = shared.connection(wc.qpNum(i));
        if (c == null || c.isClosing()) {
            if (!shared.repost(slot)) {
                LOG.log(System.Logger.Level.WARNING, "{0}: a receive buffer could not be posted again", shared);
            }
            return;
        }
        c.onReceive(slot, wc, i);
    }

    private void reapDrained(long now) {
        for (int i = drainingList.size() - 1; i >= 0; i--) {
            RdmaConnection c = drainingList.get(i);
            boolean done = c.drained();
            if (done || c.drainExpired(now)) {
                if (!done) {
                    LOG.log(System.Logger.Level.DEBUG, "{0}: flushed completions did not all arrive; destroying anyway", c);
                }
                drainingList.remove(i);
                c.destroy();
            }
        }
    }

    @Override
    public void close() {
        sockets.group().closeAll(); // the liveness channels first: each RDMA connection learns its peer is gone
        io.runTasks();
        for (RdmaConnection c : new ArrayList<>(connections)) {
            c.closeNow(null);
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (!drainingList.isEmpty() && System.nanoTime() - deadline < 0) {
            pollAll();
            io.runTasks();
            reapDrained(System.nanoTime());
            if (!drainingList.isEmpty()) {
                Thread.onSpinWait();
            }
        }
        for (RdmaConnection c : new ArrayList<>(drainingList)) {
            c.destroy();
        }
        drainingList.clear();
        pollAll(); // whatever is left names destroyed connections: dropped
        devices.close(); // after every queue pair that used their queues was destroyed above
        wc.close();
        wakeup.close();
        sockets.poller().close(); // its sockets were closed above, their registrations cancelled
    }
}
