package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.rpc.transport.loop.IdleFrameTimers;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.Refusals;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One RDMA connection: a reliable-connected queue pair driven by one {@link RdmaLoop} (its I/O
 * thread), with the TCP connection of the handshake kept open beside it as the liveness channel.
 * It is a small state machine over three parts:
 * <ul>
 * <li>{@link ReceiveBuffers}: where messages arrive, its own receive queue ({@code depth + }{@value
 *     RdmaConfig#RESERVED_RECEIVES} chunks posted, {@link PrivateReceiveBuffers}) or its loop's shared
 *     receive queue ({@link SharedReceiveBuffers});</li>
 * <li>{@link RdmaReceiver}: the receive path (frames to the handler, reassembly, waiting messages,
 *     the read pause, growth of the receive queue);</li>
 * <li>{@link RdmaSender}: the send path (send queue, credits, window, posting, stalls).</li>
 * </ul>
 *
 * <h2>States</h2>
 * {@link State#SETUP} (queue pair created on a setup thread, hello exchanged), {@link State#OPEN}
 * (the loop attached it: frames flow), {@link State#DRAINING} (closing: the queue pair is in ERR and
 * the flushed completions of every posted work request are awaited, since the device may use posted
 * memory until then), {@link State#CLOSED} (queue pair destroyed, every buffer given back). Closing,
 * for any reason, happens in {@link #closeNow}: queue pair to ERR, the handler told at once
 * ({@code onClose}), the TCP connection closed; {@link #destroy} follows when the drain completes, or
 * after a few seconds without it. A connection closed before the loop attached it is destroyed at
 * once ({@link #abandon}).
 */
final class RdmaConnection extends SenderConnection implements IoLoop.Flushable {
    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    private static final long DRAIN_TIMEOUT_NANOS = 3_000_000_000L;

    /** The life of a connection; it only moves forward. */
    enum State { SETUP, OPEN, DRAINING, CLOSED }

    private final RdmaLoop loop;
    final LoopDevice loopDevice;
    final DeviceTable.Device device;
    final RdmaConfig config;
    final Connection tcp;
    private final InetSocketAddress local;
    final InetSocketAddress remote;
    final QueuePair qp;
    final int gidIndex;
    final int psn;
    final int maxFrameLength;
    private final int recvCqEntries;
    private final int sendCqEntries;
    private final long wrIdBits;
    private final int tableIndex;
    final ReceiveBuffers buffers;
    final RdmaSender sender;
    private final RdmaReceiver receiver;
    /** The idle and frame timeouts (I/O thread). */
    final IdleFrameTimers timers;
    /** Set once the connection was refused and closes after its last word (I/O thread). */
    private RdmaLastWord lastWord;
    /** This side's rendezvous keys when it enables rendezvous ({@link SendSettings#rendezvousThreshold}), else null. */
    Rendezvous rendezvous;

    private volatile State state = State.SETUP;
    // ---- I/O thread
    private volatile FrameHandler handler; // set once on attach; read by the TCP side for its pings
    boolean flushScheduled;
    private long drainDeadline;

    /**
     * Creates the queue pair (moved to INIT). On the setup thread.
     *
     * @param recvCqEntries receive completion queue entries reserved for this connection on its loop
     * @param sendCqEntries send completion queue entries reserved for it
     * @throws IOException when the device refuses a resource
     */
    RdmaConnection(RdmaLoop loop, LoopDevice loopDevice, int gidIndex, Connection tcp, int maxFrameLength,
                   int recvCqEntries, int sendCqEntries, boolean serverSide) throws IOException {
        this.loop = loop;
        this.loopDevice = loopDevice;
        this.device = loopDevice.device;
        this.config = loop.config;
        this.tcp = tcp;
        this.local = tcp.localAddress();
        this.remote = tcp.remoteAddress();
        this.gidIndex = gidIndex;
        this.psn = ThreadLocalRandom.current().nextInt(1 << 24);
        this.maxFrameLength = maxFrameLength;
        this.recvCqEntries = recvCqEntries;
        this.sendCqEntries = sendCqEntries;
        this.tableIndex = loop.table.reserveIndex();
        this.wrIdBits = WorkRequestId.connectionBits(tableIndex, loop.table.generation(tableIndex));
        this.timers = RdmaTimers.of(config.timeouts().frameRead().toNanos(),
                serverSide ? config.timeouts().idle().toNanos() : 0, System.nanoTime());
        boolean rendezvousEnabled = config.send().rendezvousThreshold() > 0;
        int sendWrs = RdmaSender.workRequests(config.send().window(), rendezvousEnabled);
        QueuePairSetup.Resources made = QueuePairSetup.create(loop, loopDevice, tableIndex, recvCqEntries, sendCqEntries,
                sendWrs, rendezvousEnabled);
        this.qp = made.qp();
        this.buffers = made.buffers();
        this.rendezvous = made.rendezvous();
        buffers.bind(qp, wrIdBits, this);
        this.sender = new RdmaSender(this, loop, qp, made.wrs(), wrIdBits, device.index, device.windowBoundsByRegion);
        this.receiver = new RdmaReceiver(this, loop, buffers, sender, maxFrameLength, serverSide, rendezvousEnabled);
    }

    // ================================================================== SETUP (setup thread)

    /** Fills this side's hello; posts the receives it announces. On the setup thread, before the loop knows us. */
    void prepareHello(Hello h) throws IOException {
        QueuePairSetup.fillHello(this, h);
    }

    /** Moves the queue pair to RTR and RTS towards the peer of {@code peer}; sets up credits. */
    void connect(Hello peer) throws IOException {
        rendezvous = QueuePairSetup.connect(this, peer);
    }

    /** Releases everything of a connection that never reached the loop (failed handshake): SETUP to CLOSED. */
    void abandon() {
        if (toClosed()) {
            loop.table.releaseIndex(tableIndex);
        }
    }

    /**
     * On the I/O thread: gives up a connection whose handshake failed; closes it if it was attached
     * meanwhile.
     */
    void abandonOnLoop() {
        closeNow(new IOException("RDMA handshake abandoned"));
    }

    RdmaLoop loop() {
        return loop;
    }

    /** After the queue pair is destroyed: every receive and send buffer goes back. */
    private void releaseBuffers() {
        receiver.dropWaiting();
        receiver.releaseRead();
        buffers.close();
        receiver.releaseGrowthClaim();
        sender.release();
        if (rendezvous != null) {
            rendezvous.close(); // after the queue pair: no window is bound any more, no frame can be read
        }
    }

    /** On the I/O thread: the loop put the connection in its table; frames go to {@code frameHandler} now (SETUP to OPEN). */
    void attached(FrameHandler frameHandler) {
        buffers.attach();
        this.handler = frameHandler;
        if (state == State.SETUP) {
            state = State.OPEN;
        }
    }

    FrameHandler handler() {
        return handler;
    }

    /** @return true once closing started (I/O thread) */
    boolean isClosing() {
        State s = state;
        return s == State.DRAINING || s == State.CLOSED;
    }

    /** @return true when a completion's generation is not this connection's (a stale completion) */
    boolean generationMismatch(int generation) {
        return WorkRequestId.generation(wrIdBits) != generation;
    }

    int tableIndex() {
        return tableIndex;
    }

    // ================================================================== completions (I/O thread)

    /** A receive completed. */
    void onReceive(int slot, WorkCompletions wc, int i) {
        receiver.onReceive(slot, wc, i);
    }

    /** A send of {@code kind} ({@link WorkRequestId#DATA} or {@link WorkRequestId#CREDIT}) completed. */
    void onSend(int kind, int slot, WorkCompletions wc, int i) {
        boolean ok = wc.statusCode(i) == 0;
        boolean queued = sender.completed(kind, slot, ok);
        if (!ok) {
            onError(CompletionFailures.operation(kind), wc, i);
            return;
        }
        if (kind == WorkRequestId.READ && !isClosing()) {
            receiver.onReadCompleted();
        }
        if (queued && !isClosing()) {
            loop.scheduleFlush(this);
        }
        if (kind == WorkRequestId.DATA && handler != null) {
            handler.onSendProgress(this);
        }
        if (!isClosing()) { // the handler may have closed it
            receiver.onSendCompleted();
        }
    }

    /** A work request failed: {@link CompletionFailures#failed}. */
    void onError(String operation, WorkCompletions wc, int i) {
        CompletionFailures.failed(this, operation, wc, i);
    }

    /** @return true when a frame of this connection, sent or being read, uses {@code u} (I/O thread) */
    boolean holds(DeviceTable.UserRegion u) {
        return receiver.holds(u) || sender.holds(u);
    }

    void protocolError(String reason) {
        String msg = "protocol error from " + remote + " over RDMA: " + reason;
        LOG.log(System.Logger.Level.WARNING, "closing connection: " + msg);
        closeNow(new ProtocolException(msg));
    }

    /** Reports that the pool had no buffer for {@code what} (a JFR event). */
    void poolPressure(String what) {
        RdmaEvents.poolPressure(what, String.valueOf(remote), loop.transport.bytesInUse(), config.poolHighWaterMark(),
                config.bufferPool().maxPooledBytes());
    }

    // ================================================================== send side (claims and commits: SenderConnection)

    @Override
    RdmaSender sender() {
        return sender;
    }

    /** End of a loop iteration: post what is queued; a failure to post closes the connection. */
    @Override
    public void flush() {
        flushScheduled = false;
        if (state == State.CLOSED) {
            return;
        }
        try {
            sender.flush(isClosing());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "posting on " + this + " failed", e);
            closeNow(e);
        }
    }

    // ================================================================== closing (I/O thread)

    /** Periodic tick on the I/O thread: the handler's, then the idle and frame timeouts, or the last word's. */
    void tick(long now) {
        if (state != State.OPEN) {
            return;
        }
        if (lastWord != null) {
            if (lastWord.step(this, now)) {
                closeNow(lastWord.cause());
            }
            return;
        }
        receiver.retryShare();
        if (state == State.OPEN) {
            handler.onTick(this, now);
        }
        if (state != State.OPEN || lastWord != null) {
            return;
        }
        IOException refused = timers.check(now, receiver.partialBytes(), receiver.paused(),
                handler.callsInFlight() > 0 || sender.waitingOnPeer() > 0 || receiver.reading());
        if (refused != null) {
            refuse(refused);
        }
    }

    /** The timers refuse the connection: its handler says why (a server's last word) and closes it. */
    private void refuse(IOException cause) {
        Refusals.refuse(LOG, handler, this, cause, this::closeNow);
    }

    /**
     * Closes after {@code lastFrame}: reading stops for good (what was half received goes back), the
     * calls in flight answer, the frame is sent, and once its send completed (or after
     * {@link RdmaLastWord#LINGER_NANOS}) the connection closes with {@code cause}.
     */
    @Override
    public void closeAfter(MemorySegment lastFrame, Throwable cause) {
        byte[] frame = lastFrame.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        loop.execute(() -> {
            if (state == State.OPEN && lastWord == null) {
                lastWord = new RdmaLastWord(frame, cause, System.nanoTime());
                receiver.stop();
                if (lastWord.step(this, System.nanoTime())) {
                    closeNow(cause);
                }
            }
        });
    }

    /** @return true when nothing this side committed waits to be sent or to complete (its last word is out) */
    boolean sentEverything() {
        return sender.queuedEntries() == 0;
    }

    /**
     * Whether this connection needs ticks at the full rate (not open yet, closing, a frame half
     * received or waiting for its address's share, a last word under way, or its handler times
     * something). Idle connections tick at the idle interval: their idle timeout fires within it.
     */
    boolean hasTimedWork() {
        return state != State.OPEN || handler == null || lastWord != null || receiver.waitingForShare()
                || receiver.partialBytes() > 0 || handler.hasTimedWork();
    }

    boolean drainExpired(long now) {
        return now - drainDeadline >= 0;
    }

    /** A line of this connection's state, for diagnostics (I/O thread). */
    String diagnostics() {
        return this + ": " + state + ", " + sender.diagnostics() + ", " + receiver.diagnostics() + ", flushScheduled "
                + flushScheduled;
    }

    /** @return true when every posted work request has completed (flushed): the drain is over */
    boolean drained() {
        return buffers.outstanding() == 0 && sender.postedSends() == 0;
    }

    /** True while queued frames wait for send completions (the loop must wake for them). */
    boolean needsSendEvents() {
        return sender.needsSendEvents(isClosing());
    }

    /** Closes on the I/O thread (OPEN to DRAINING): queue pair to ERR, handler told once, TCP closed, then drained by the loop. */
    void closeNow(Throwable cause) {
        if (isClosing()) {
            return;
        }
        if (handler == null) {
            // Never attached (the handshake failed or the peer left during it): no completion of
            // ours is dispatched yet, so destroy at once.
            abandon();
            return;
        }
        state = State.DRAINING;
        sender.close();
        try {
            qp.toError();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "moving " + qp + " to ERR failed", e);
        }
        RdmaEvents.qpState(device.context.name(), qp.qpNum(), String.valueOf(remote), "ERR",
                cause == null ? "closed" : String.valueOf(cause.getMessage()));
        receiver.dropWaiting();
        tcp.close(null);
        drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        loop.draining(this);
        try {
            handler.onClose(this, cause);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "connection close handler failed", e);
        }
    }

    /** After the drain (or its timeout), DRAINING to CLOSED: destroys the queue pair, then gives every buffer back. */
    void destroy() {
        if (toClosed()) {
            RdmaEvents.qpState(device.context.name(), qp.qpNum(), String.valueOf(remote), "DESTROYED", "");
            loop.detach(this);
        }
    }

    /**
     * To CLOSED, once: destroys the queue pair, then gives every buffer and the completion-queue
     * entries back. The caller then frees the connection's table slot ({@link #abandon}) or
     * detaches it from the loop ({@link #destroy}).
     *
     * @return false if the connection was closed already, and nothing was done
     */
    private boolean toClosed() {
        if (state == State.CLOSED) {
            return false;
        }
        state = State.CLOSED;
        if (rendezvous != null) {
            // windows first: a bound type-2 window holds its queue pair (Soft-RoCE waits for it in
            // destroy, then fails) and its region (deregistration fails while it is bound); the queue
            // pair is in ERR, so nothing reads through them (or through the frames' own regions) any more
            rendezvous.closeKeys();
        }
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not destroy " + qp, e);
        }
        releaseBuffers();
        if (handler != null) {
            try {
                handler.onReleased(this); // a response target the NIC was writing at the close is the caller's now
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "connection release handler failed", e);
            }
        }
        loop.release(loopDevice, recvCqEntries, sendCqEntries);
        return true;
    }

    /** The TCP liveness connection closed: the peer is gone. */
    void peerLost(Throwable cause) {
        // An orderly close or an EOF stays an EOF (the peer closed); anything else (a ping not
        // answered, a reset) keeps its message, so the calls that fail say why.
        IOException e = cause instanceof EOFException eof ? eof
                : cause == null ? new EOFException("peer lost: the TCP connection beside the RDMA connection closed")
                : new IOException("peer lost: the TCP connection beside the RDMA connection closed (" + cause.getMessage() + ")", cause);
        loop.execute(() -> closeNow(e));
    }

    /**
     * @return what this (client) connection waits on its server for: calls waiting for their responses,
     *         as its handler counts them, and frames still queued or in flight, or sent by rendezvous and
     *         not yet reported read (they may hold the application's registered memory). The TCP
     *         connection beside it pings the server while there are any, so a server whose process
     *         stopped is given up, and what it held is let go (a hint, any thread).
     */
    int callsInFlight() {
        FrameHandler h = handler;
        return (h == null ? 0 : h.callsInFlight()) + sender.waitingOnPeer();
    }

    // ================================================================== Connection

    @Override
    public boolean isOpen() {
        return state == State.OPEN;
    }

    @Override
    public boolean inEventLoop() {
        return loop.inLoop();
    }

    @Override
    public long tickIntervalNanos() {
        return config.loop().tickInterval().toNanos();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    /** The session of the TCP connection this one started on (its hello went over it). */
    @Override
    public javax.net.ssl.SSLSession tlsSession() {
        return tcp.tlsSession();
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public void close(Throwable cause) {
        loop.execute(() -> closeNow(cause));
    }

    @Override
    public void setReadEnabled(boolean enabled) {
        loop.execute(() -> receiver.setReadEnabled(enabled));
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    @Override
    public dev.rdmarpc.rpc.transport.FrameHold holdFrame() {
        return loop.inLoop() ? receiver.holdFrame() : null;
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + local + " -> " + remote + ", " + device + ", qpn " + qp.qpNum()
                + (isOpen() ? "" : ", closed") + "]";
    }
}
