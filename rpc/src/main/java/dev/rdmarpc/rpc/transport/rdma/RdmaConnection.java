package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.ConnectionAttributes;
import dev.rdmarpc.ibverbs.verbs.Gid;
import dev.rdmarpc.ibverbs.verbs.Mtu;
import dev.rdmarpc.ibverbs.verbs.QpEndpoint;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SendOpcode;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequest;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.verbs.WcStatus;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.IdleStrategy;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One RDMA connection: a reliable-connected queue pair with its receive buffers, its send queue
 * and its credits, driven by one {@link RdmaLoop} (its I/O thread), with the TCP connection of the
 * handshake kept open beside it as the liveness channel.
 *
 * <h2>Receive side (I/O thread)</h2>
 * {@code depth + 2} chunks are posted as receives. Each completion is one message: whole frames,
 * handed to the handler in place, in the registered buffer (zero copy: a handler that keeps the
 * bytes copies them, as blocking handlers do); or one piece of a frame larger than a chunk, copied
 * into a reassembly buffer until the frame is whole. When the handler returns, the buffer is posted
 * again and counted as a credit to return.
 *
 * <p>With a shared receive queue ({@link RdmaConfig#sharedReceiveQueue}) the connection posts no
 * receives of its own: its messages arrive in buffers of its loop's {@link SharedReceives}, which
 * the loop hands to it by QP number; "posting again" then means giving the buffer back to that
 * queue, and the credits it grants its peer are {@link RdmaConfig#sharedReceiveQueueCredits}, a
 * share of the queue that does not grow.
 *
 * <h2>Send side (any thread, under the send lock)</h2>
 * Frames are claimed and committed in a {@link SendQueue}; a commit on the I/O thread is posted at
 * the end of the loop iteration (so a batch of responses leaves together), a commit from another
 * thread is posted at once when the window and the credits allow. Every message is a
 * SEND_WITH_IMM whose immediate data returns credits ({@link Credits}); messages up to the inline
 * threshold are sent inline; in event mode only the last message of each posted batch is
 * solicited, so the peer wakes once per batch.
 *
 * <h2>Closing</h2>
 * Closing (any reason) moves the queue pair to ERR, fails nothing itself but tells the handler at
 * once ({@code onClose}), closes the TCP connection, then waits for the flushed completions of
 * every posted work request before it destroys the queue pair and gives the buffers back (the
 * device may use posted memory until then); after a few seconds without them it destroys anyway.
 */
final class RdmaConnection implements Connection, IoLoop.Flushable {
    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());
    private static final int CREDIT_SLOTS = 2;
    private static final long DRAIN_TIMEOUT_NANOS = 3_000_000_000L;

    private final RdmaLoop loop;
    final RdmaLoop.LoopDevice loopDevice;
    private final DeviceTable.Device device;
    private final int devIndex;
    private final RdmaConfig config;
    private final RdmaMetrics metrics;
    private final BufferPool pool;
    final Connection tcp;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    final QueuePair qp;
    private final int gidIndex;
    private final int psn;
    private final SendWorkRequests sendWrs;
    private final ReceiveWorkRequests recvWrs;
    private final PooledBuffer[] recvBufs;
    /** The loop's shared receive queue on this device, or null when this connection has its own. */
    private final SharedReceives shared;
    private int recvSlots;
    private final int window;
    private final int maxFrameLength;
    private final int receiveSize;
    private final int inlineCap;
    private final boolean solicit;
    private final int recvReserve;
    private final int sendReserve;

    // set once the peer's hello is known (before the loop sees the connection)
    private SendQueue sq;
    private Credits credits;

    // ---- send side, guarded by sendLock
    private final ReentrantLock sendLock = new ReentrantLock();
    private int sendOutstanding;
    private int creditFirst;
    private int creditInFlight;
    private long stallStart;
    private boolean stallForWindow;
    private volatile long pendingVolatile;
    /** The send queue's entries, as last seen under the send lock (read by the I/O thread's pause rule). */
    private volatile int queuedEntries;

    private final long wrIdBase;
    private final int tableIndex;

    // ---- I/O thread
    private FrameHandler handler;
    private volatile boolean open;
    private boolean closing;
    private boolean destroyed;
    private int recvOutstanding;
    boolean flushScheduled;
    private int reposted;
    private PooledBuffer large;
    private int largeFilled;
    private int largeLength;
    private boolean readEnabled = true;
    private boolean readPaused;
    private final long writeHighWaterMark;
    private final boolean serverSide;
    private final int[] held;
    private final int[] heldLength;
    private final int[] heldImm;
    private int heldCount;
    private long drainDeadline;

    /**
     * Creates the queue pair (moved to INIT) and posts the receive buffers. On the setup thread.
     *
     * @throws IOException when the device refuses a resource or the pool has no buffer
     */
    RdmaConnection(RdmaLoop loop, RdmaLoop.LoopDevice loopDevice, int gidIndex, Connection tcp, int maxFrameLength,
                   int recvReserve, int sendReserve, boolean serverSide) throws IOException {
        this.serverSide = serverSide;
        this.loop = loop;
        this.loopDevice = loopDevice;
        this.device = loopDevice.device;
        this.devIndex = device.index;
        this.config = loop.config;
        this.metrics = loop.metrics;
        this.pool = loop.pool;
        this.tcp = tcp;
        this.local = tcp.localAddress();
        this.remote = tcp.remoteAddress();
        this.gidIndex = gidIndex;
        this.psn = ThreadLocalRandom.current().nextInt(1 << 24);
        this.window = config.sendWindow();
        this.maxFrameLength = maxFrameLength;
        this.receiveSize = pool.chunkSize();
        this.solicit = config.idleStrategy().mode() != IdleStrategy.Mode.BUSY_POLL;
        this.recvReserve = recvReserve;
        this.sendReserve = sendReserve;
        this.writeHighWaterMark = config.writeHighWaterMark();
        this.shared = loopDevice.shared;
        int recvCapacity = config.maxReceiveQueueDepth() + RdmaConfig.RESERVED_RECEIVES;
        // held messages are data messages the peer sent with credits: at most the credits granted
        int heldCapacity = shared == null ? recvCapacity : config.sharedReceiveQueueCredits();
        this.held = new int[heldCapacity];
        this.heldLength = new int[heldCapacity];
        this.heldImm = new int[heldCapacity];
        this.recvBufs = shared == null ? new PooledBuffer[recvCapacity] : new PooledBuffer[0];
        this.tableIndex = loop.reserveIndex();
        this.wrIdBase = RdmaLoop.wrIdBase(tableIndex, loop.generation(tableIndex));
        QueuePair q = null;
        SendWorkRequests s = null;
        ReceiveWorkRequests r = null;
        try {
            QueuePairInit init = new QueuePairInit().sendCompletionQueue(loopDevice.sendCq)
                    .receiveCompletionQueue(loopDevice.recvCq).maxSendWr(window + CREDIT_SLOTS).maxSendSge(2)
                    .maxInlineData(config.inlineThreshold());
            if (shared == null) {
                init.maxRecvWr(recvCapacity).maxRecvSge(1);
            } else {
                init.sharedReceiveQueue(shared.srq).maxRecvWr(0).maxRecvSge(0);
            }
            q = device.pd.createQueuePair(init);
            s = new SendWorkRequests(window + CREDIT_SLOTS, 2);
            r = shared == null ? new ReceiveWorkRequests(recvCapacity, 1) : null;
            q.toInit(new ConnectionAttributes().port(device.port).accessFlags(0));
        } catch (RuntimeException e) {
            closeQuietly(q, s, r);
            loop.releaseIndex(tableIndex);
            loop.release(loopDevice, recvReserve, sendReserve);
            throw new IOException("cannot create the queue pair on " + device + ": " + e.getMessage(), e);
        }
        this.qp = q;
        this.sendWrs = s;
        this.recvWrs = r;
        this.inlineCap = Math.min(config.inlineThreshold(), q.capabilities().maxInlineData());
    }

    private static void closeQuietly(AutoCloseable... resources) {
        for (AutoCloseable c : resources) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    LOG.log(System.Logger.Level.DEBUG, "cleanup failed", e);
                }
            }
        }
    }

    /** Fills this side's hello; posts the receives it announces. On the setup thread, before the loop knows us. */
    void prepareHello(Hello h) throws IOException {
        int depth = creditedDepth();
        int n = shared == null ? depth + RdmaConfig.RESERVED_RECEIVES : 0;
        for (int i = 0; i < n; i++) {
            PooledBuffer b = pool.acquire();
            if (b == null) {
                throw new IOException("buffer pool exhausted: no receive buffer for a new RDMA connection");
            }
            recvBufs[i] = b;
            recvSlots++;
        }
        for (int i = 0; i < n; i++) {
            if (!postReceive(i)) {
                throw new IOException("ibv_post_recv failed while setting up the connection");
            }
        }
        QpEndpoint me = qp.endpoint(device.port, gidIndex, psn);
        h.qpn = me.qpNum();
        h.psn = me.psn();
        byte[] g = me.gid().toByteArray();
        System.arraycopy(g, 0, h.gid, 0, 16);
        h.lid = me.lid();
        h.mtu = device.portAttributes.activeMtu().value();
        h.receiveSize = receiveSize;
        h.receiveCount = depth;
        h.maxFrameLength = maxFrameLength;
    }

    /** @return the credits this side grants its peer at the start */
    private int creditedDepth() {
        return shared == null ? config.receiveQueueDepth() : config.sharedReceiveQueueCredits();
    }

    /** Moves the queue pair to RTR and RTS towards the peer of {@code peer}; sets up credits. */
    void connect(Hello peer) throws IOException {
        Mtu mtu = device.portAttributes.activeMtu().min(Mtu.of(peer.mtu));
        int peerReceive = Math.min(peer.receiveSize, receiveSize);
        this.sq = new SendQueue(pool, window, peerReceive);
        int depth = creditedDepth();
        // a shared queue's share does not grow: max = depth makes every growth step 0
        this.credits = new Credits(peer.receiveCount, depth, shared == null ? config.maxReceiveQueueDepth() : depth);
        try {
            ConnectionAttributes a = new ConnectionAttributes().port(device.port).sgidIndex(gidIndex)
                    .remote(new QpEndpoint(peer.qpn, peer.psn, Gid.of(peer.gid), peer.lid)).pathMtu(mtu)
                    .localPsn(psn).accessFlags(0).maxDestReadAtomic(0)
                    .maxReadAtomic(0).timeout(config.ackTimeout()).retryCount(7).rnrRetry(7);
            qp.toRtr(a);
            qp.toRts(a);
        } catch (RuntimeException e) {
            throw new IOException("cannot connect the queue pair to " + remote + ": " + e.getMessage(), e);
        }
        RdmaEvents.qpState(device.context.name(), qp.qpNum(), String.valueOf(remote), "RTS",
                "connected to QP " + peer.qpn + ", MTU " + mtu.bytes());
    }

    /** Releases everything of a connection that never reached the loop (failed handshake). */
    void abandon() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        closing = true;
        open = false;
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not destroy " + qp, e);
        }
        releaseBuffers();
        closeQuietly(sendWrs, recvWrs);
        loop.release(loopDevice, recvReserve, sendReserve);
        loop.releaseIndex(tableIndex);
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

    private void releaseBuffers() {
        for (int i = 0; i < recvBufs.length; i++) {
            if (recvBufs[i] != null) {
                recvBufs[i].release();
                recvBufs[i] = null;
            }
        }
        if (large != null) {
            large.release();
            large = null;
        }
        if (sq != null) {
            sendLock.lock();
            try {
                sq.close();
                sq.releaseInFlight();
            } finally {
                sendLock.unlock();
            }
        }
    }

    /** On the I/O thread: the loop put the connection in its table; frames go to {@code frameHandler} now. */
    void attached(FrameHandler frameHandler) {
        this.handler = frameHandler;
        this.open = !closing;
    }

    /** @return true once closing started (I/O thread) */
    boolean isClosing() {
        return closing;
    }

    /** @return true when a completion's generation is not this connection's (a stale completion) */
    boolean generationMismatch(int generation) {
        return ((int) (wrIdBase >>> 48) & 0xFFFF) != generation;
    }

    int tableIndex() {
        return tableIndex;
    }

    // ================================================================== receive side (I/O thread)

    private boolean postReceive(int slot) {
        if (shared != null) {
            return shared.repost(slot);
        }
        PooledBuffer b = recvBufs[slot];
        recvWrs.get(slot).wrId(wrIdBase | RdmaLoop.KIND_RECV_BITS | slot)
                .sge(0, b.segment().address(), receiveSize, DeviceTable.lkey(b, devIndex)).sgeCount(1);
        int rc = qp.postReceive(recvWrs, slot, 1);
        if (rc != 0) {
            return false;
        }
        recvOutstanding++;
        return true;
    }

    /** A receive completed (I/O thread). */
    void onReceive(int slot, WorkCompletions wc, int i) {
        if (shared == null) {
            recvOutstanding--;
        }
        int status = wc.statusCode(i);
        if (status != 0) {
            giveBackShared(slot);
            onError("receive", wc, i);
            return;
        }
        if (closing) {
            giveBackShared(slot);
            return; // a message that raced the close: drop it, keep the buffer for release
        }
        if (!wc.hasImmData(i)) {
            giveBackShared(slot);
            protocolError("a message without immediate data (not an rdmarpc peer?)");
            return;
        }
        int imm = wc.immData(i);
        int length = wc.byteLength(i);
        // Credits count at once, even when the payload has to wait: they are what lets our own
        // queued sends drain, and with them the reason for holding.
        boolean queued;
        sendLock.lock();
        try {
            credits.onImm(imm);
            if ((imm & Credits.CREDIT_ONLY) == 0) {
                credits.received();
                if (shared != null && credits.peerAvailable() < 0) {
                    // with a private queue the device would have refused it (RNR); a shared queue
                    // may have had a buffer, so the overrun must be caught here
                    throw new IllegalArgumentException("the peer sent a data message without a credit");
                }
            }
            queued = sq.hasQueued();
        } catch (IllegalArgumentException e) {
            sendLock.unlock();
            giveBackShared(slot);
            protocolError(e.getMessage());
            return;
        }
        sendLock.unlock();
        if (queued) {
            loop.scheduleFlush(this);
        }
        if ((imm & Credits.CREDIT_ONLY) != 0) {
            if (length != 0) {
                protocolError("a credit-only message with " + length + " bytes");
                return;
            }
            repost(slot, false);
            return;
        }
        if (!readEnabled || readPaused || heldCount > 0) {
            held[heldCount] = slot;
            heldLength[heldCount] = length;
            heldImm[heldCount] = imm;
            heldCount++;
            return;
        }
        handle(slot, length, imm);
        checkReadPause();
    }

    /**
     * Stops handling received messages while more than the write high-water mark is queued for
     * sending, or more than half the send queue's {@value SendQueue#ENTRIES} entries are taken (what
     * the TCP transport does by not reading its socket): their buffers are not posted again, so the
     * peer runs out of credits and stops. Handling resumes below half the mark and a quarter of the
     * entries. Without the entry rule, responses of a few KiB each (one entry apiece when they do not
     * share a chunk) filled the queue long before the byte mark, and calls failed with "server send
     * queue full".
     * Accepted (server) connections only: a client never stops reading its responses (its sends
     * are bounded by the RPC client), so two sides can never wait for each other.
     */
    private void checkReadPause() {
        if (serverSide && !readPaused && (pendingVolatile > writeHighWaterMark || queuedEntries > SendQueue.ENTRIES / 2)) {
            readPaused = true;
        }
    }

    /** Handles held messages, in order, while reading is allowed (I/O thread). */
    private void resumeHeld() {
        if (readPaused && pendingVolatile <= writeHighWaterMark / 2 && queuedEntries <= SendQueue.ENTRIES / 4) {
            readPaused = false;
        }
        // each message leaves the held list before it is handled: a handler that closes the
        // connection then finds only the messages still waiting (closeNow gives those back)
        while (heldCount > 0 && readEnabled && !readPaused && open) {
            int slot = held[0];
            int length = heldLength[0];
            int imm = heldImm[0];
            heldCount--;
            System.arraycopy(held, 1, held, 0, heldCount);
            System.arraycopy(heldLength, 1, heldLength, 0, heldCount);
            System.arraycopy(heldImm, 1, heldImm, 0, heldCount);
            handle(slot, length, imm);
            checkReadPause();
        }
    }

    /** Hands a data message's frames to the handler, then posts its buffer again (I/O thread). */
    private void handle(int slot, int length, int imm) {
        metrics.messagesReceived.increment();
        deliver(shared == null ? recvBufs[slot].segment() : shared.segment(slot), length);
        if (!open) {
            giveBackShared(slot);
            return; // closed by the handler or by bad input: the buffer is released with the connection
        }
        repost(slot, true);
        if ((imm & Credits.STALLED) != 0) {
            grow();
        }
    }

    private void repost(int slot, boolean credit) {
        if (!postReceive(slot)) {
            closeNow(new IOException("ibv_post_recv failed on " + qp));
            return;
        }
        if (credit) {
            reposted++;
            loop.scheduleFlush(this);
        }
    }

    /** The peer ran out of credits: post more receives (up to the maximum) and grant them. */
    private void grow() {
        int step;
        sendLock.lock();
        try {
            step = credits.growthStep();
        } finally {
            sendLock.unlock();
        }
        int added = 0;
        while (added < step) {
            PooledBuffer b = pool.acquire();
            if (b == null) {
                break;
            }
            int slot = recvSlots;
            recvBufs[slot] = b;
            recvSlots++;
            if (!postReceive(slot)) {
                closeNow(new IOException("ibv_post_recv failed on " + qp));
                return;
            }
            added++;
        }
        if (added > 0) {
            sendLock.lock();
            try {
                credits.grew(added);
            } finally {
                sendLock.unlock();
            }
            metrics.receiveGrowths.increment();
            loop.scheduleFlush(this);
        }
    }

    /** Hands the frames of one message to the handler, or adds it to the frame being reassembled. */
    private void deliver(MemorySegment seg, int length) {
        if (large != null) {
            int need = largeLength - largeFilled;
            if (length > need) {
                protocolError("a message of " + length + " bytes overruns the frame being reassembled (" + need + " missing)");
                return;
            }
            MemorySegment.copy(seg, 0, large.segment(), largeFilled, length);
            largeFilled += length;
            if (largeFilled == largeLength) {
                PooledBuffer b = large;
                large = null;
                try {
                    handler.onFrame(this, b.segment(), 0, largeLength);
                } finally {
                    b.release();
                }
            }
            return;
        }
        int off = 0;
        while (off < length) {
            long len = FrameDescriptor.check(seg, off, length - off, maxFrameLength);
            if (len < 0) {
                protocolError(len == FrameDescriptor.INCOMPLETE_HEADER ? "a message ends inside a frame header"
                        : FrameDescriptor.describe(len));
                return;
            }
            if (len <= length - off) {
                handler.onFrame(this, seg, off, (int) len);
                off += (int) len;
                if (!open) {
                    return;
                }
                continue;
            }
            if (off != 0 || length != receiveSize) {
                protocolError("a frame of " + len + " bytes is cut short in a message of " + length + " bytes");
                return;
            }
            large = pool.acquire((int) len);
            if (large == null) {
                RdmaEvents.poolPressure("no buffer to reassemble a frame of " + len + " bytes", String.valueOf(remote),
                        loop.transport.bytesInUse(), config.poolHighWaterMark(), config.poolBytes());
                closeNow(new IOException("buffer pool exhausted: no buffer for a frame of " + len + " bytes"));
                return;
            }
            MemorySegment.copy(seg, 0, large.segment(), 0, length);
            largeFilled = length;
            largeLength = (int) len;
            return;
        }
    }

    /** With a shared queue: gives a buffer this connection will not repost back to it (the queue owns it). */
    private void giveBackShared(int slot) {
        if (shared != null && !shared.repost(slot)) {
            LOG.log(System.Logger.Level.WARNING, "{0}: a shared receive buffer could not be posted again", this);
        }
    }

    private void protocolError(String reason) {
        String msg = "protocol error from " + remote + " over RDMA: " + reason;
        LOG.log(System.Logger.Level.WARNING, "closing connection: " + msg);
        closeNow(new ProtocolException(msg));
    }

    // ================================================================== send side

    @Override
    public long claim(int frameLength) {
        return claim(frameLength, Long.MAX_VALUE);
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        if (frameLength < FrameDescriptor.HEADER_LENGTH) {
            throw new IllegalArgumentException("frame shorter than a header: " + frameLength);
        }
        sendLock.lock();
        if (sq.pendingBytes() >= unsentLimit) {
            sendLock.unlock();
            return BACK_PRESSURED;
        }
        long r = sq.claim(frameLength);
        if (r < 0) {
            sendLock.unlock();
            if (r == NO_BUFFER) {
                RdmaEvents.poolPressure("no send buffer for a frame of " + frameLength + " bytes", String.valueOf(remote),
                        loop.transport.bytesInUse(), config.poolHighWaterMark(), config.poolBytes());
            }
        }
        return r;
    }

    /** Smallest attachment sent in place from registered application memory; smaller ones are copied. */
    static final int ZERO_COPY_MIN = 4096;

    @Override
    public long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit) {
        long tailLength = tail.byteSize();
        if (tailLength < ZERO_COPY_MIN || tailLength >= frameLength || !tail.isNative()) {
            return UNSUPPORTED;
        }
        long lkey = loop.transport.devices().userLkey(tail.address(), tailLength, devIndex);
        if (lkey < 0) {
            return UNSUPPORTED;
        }
        sendLock.lock();
        if (sq.pendingBytes() >= unsentLimit) {
            sendLock.unlock();
            return BACK_PRESSURED;
        }
        long r = sq.claimWithTail(frameLength, tail.address(), (int) tailLength, (int) lkey);
        if (r < 0) {
            sendLock.unlock();
        }
        return r;
    }

    @Override
    public MemorySegment claimBuffer() {
        return sq.claimBuffer();
    }

    @Override
    public void commit() {
        sq.commit();
        pendingVolatile = sq.pendingBytes();
        queuedEntries = sq.entries();
        if (loop.inLoop()) {
            sendLock.unlock();
            loop.scheduleFlush(this);
            return;
        }
        boolean wake;
        try {
            post();
            wake = sq.hasQueued() && sq.windowFull();
        } finally {
            sendLock.unlock();
        }
        if (wake) {
            loop.wakeup(); // completions to harvest before the rest can go
        }
    }

    @Override
    public void abort() {
        sq.abort();
        sendLock.unlock();
    }

    /** End of a loop iteration: post what is queued; a failure to post closes the connection. */
    @Override
    public void flush() {
        try {
            flushFromLoop();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "posting on " + this + " failed", e);
            closeNow(e);
        }
    }

    /** Posts what is queued, sends credits back if nothing carried them. */
    private void flushFromLoop() {
        flushScheduled = false;
        if (destroyed) {
            return;
        }
        sendLock.lock();
        try {
            if (reposted > 0) {
                for (int i = 0; i < reposted; i++) {
                    credits.reposted();
                }
                reposted = 0;
            }
            if (closing) {
                return;
            }
            post();
            if (credits.creditOnlyDue() && creditInFlight < CREDIT_SLOTS) {
                postCreditOnly();
            }
        } finally {
            sendLock.unlock();
        }
    }

    /** Posts as many queued messages as the window and the credits allow; under the send lock. */
    private void post() {
        if (sendClosedLocked()) {
            return;
        }
        int first = -1;
        int count = 0;
        int last = -1;
        while (sq.canTake() && credits.tryConsume()) {
            int slot = sq.take();
            if (count > 0 && slot != last + 1) { // the ring wrapped: post the run so far
                if (!postRun(first, count, false)) {
                    return;
                }
                count = 0;
            }
            if (count == 0) {
                first = slot;
            }
            fill(slot);
            last = slot;
            count++;
        }
        if (count > 0 && !postRun(first, count, true)) {
            return;
        }
        trackStall();
    }

    private boolean sendClosedLocked() {
        return sq.isClosed();
    }

    private void fill(int slot) {
        PooledBuffer b = sq.takenBuffer();
        int len = sq.takenLength();
        int flags = SendWorkRequest.SIGNALED;
        if (len <= inlineCap) {
            flags |= SendWorkRequest.INLINE;
            metrics.inlineSent.increment();
        }
        SendWorkRequest w = sendWrs.get(slot).wrId(wrIdBase | RdmaLoop.KIND_DATA_BITS | slot)
                .opcode(SendOpcode.SEND_WITH_IMM).immData(credits.nextImm(false)).flags(flags);
        int head = sq.takenHeadLength();
        int tail = len - head;
        int n = 0;
        if (head > 0) {
            w.sge(n++, b.segment().address() + sq.takenOffset(), head, DeviceTable.lkey(b, devIndex));
        }
        if (tail > 0) {
            w.sge(n++, sq.takenTailAddress(), tail, sq.takenTailLkey());
            metrics.zeroCopyBytes.add(tail);
        }
        w.sgeCount(n);
    }

    private boolean postRun(int first, int count, boolean lastRun) {
        if (lastRun && solicit) {
            sendWrs.get(first + count - 1).solicited(true);
        }
        int rc = qp.postSend(sendWrs, first, count);
        if (rc != 0) {
            int failed = sendWrs.failedIndex();
            int posted = failed >= first && failed < first + count ? failed - first : 0;
            sendOutstanding += posted;
            failSend("ibv_post_send failed (errno " + rc + ") on " + qp);
            return false;
        }
        sendOutstanding += count;
        metrics.messagesSent.add(count);
        return true;
    }

    private void postCreditOnly() {
        int slot = window + ((creditFirst + creditInFlight) % CREDIT_SLOTS);
        int flags = SendWorkRequest.SIGNALED | SendWorkRequest.SOLICITED;
        sendWrs.get(slot).wrId(wrIdBase | RdmaLoop.KIND_CREDIT_BITS | slot).opcode(SendOpcode.SEND_WITH_IMM)
                .immData(credits.nextImm(true)).flags(flags).sgeCount(0);
        int rc = qp.postSend(sendWrs, slot, 1);
        if (rc != 0) {
            failSend("ibv_post_send (credits) failed (errno " + rc + ") on " + qp);
            return;
        }
        creditInFlight++;
        sendOutstanding++;
        metrics.creditOnlySent.increment();
    }

    private void failSend(String why) {
        IOException e = new IOException(why);
        loop.execute(() -> closeNow(e));
    }

    /** Stall bookkeeping after a post, under the send lock. */
    private void trackStall() {
        boolean queued = sq.hasQueued();
        if (queued && stallStart == 0) {
            stallStart = System.nanoTime();
            stallForWindow = sq.windowFull();
            if (stallForWindow) {
                metrics.windowStalls.increment();
            } else {
                metrics.creditStalls.increment();
            }
        } else if (!queued && stallStart != 0) {
            if (RdmaEvents.stallEnabled()) {
                RdmaEvents.stall(qp.qpNum(), String.valueOf(remote), stallForWindow ? "window" : "credits",
                        System.nanoTime() - stallStart, sq.pendingBytes());
            }
            stallStart = 0;
        }
    }

    /** A send completed (I/O thread). */
    void onSend(int kind, int slot, WorkCompletions wc, int i) {
        int status = wc.statusCode(i);
        boolean queued;
        boolean progressed = false;
        sendLock.lock();
        try {
            sendOutstanding--;
            if (kind == RdmaLoop.KIND_DATA) {
                sq.completed(slot);
                pendingVolatile = sq.pendingBytes();
                queuedEntries = sq.entries();
                progressed = true;
            } else {
                creditInFlight--;
                creditFirst = (creditFirst + 1) % CREDIT_SLOTS;
            }
            // A freed credit slot may be what a due credit-only message waits for.
            queued = sq.hasQueued() || (kind == RdmaLoop.KIND_CREDIT && credits.creditOnlyDue());
        } finally {
            sendLock.unlock();
        }
        if (status != 0) {
            onError(kind == RdmaLoop.KIND_DATA ? "send" : "credit", wc, i);
            return;
        }
        if (queued && !closing) {
            loop.scheduleFlush(this);
        }
        if (progressed && handler != null) {
            handler.onSendProgress(this);
        }
        if ((heldCount > 0 || readPaused) && !closing) {
            resumeHeld();
        }
    }

    private void onError(String operation, WorkCompletions wc, int i) {
        WcStatus s = wc.status(i);
        if (s == WcStatus.WR_FLUSH_ERR) {
            if (!closing) {
                closeNow(new IOException("RDMA " + operation + " flushed: the queue pair failed"));
            }
            return;
        }
        metrics.completionErrors.increment();
        LOG.log(System.Logger.Level.WARNING, "{0}: {1} work request failed: {2} ({3}), vendor error 0x{4}, {5}",
                this, operation, s, s.text(), Integer.toHexString(wc.vendorError(i)), wc.describe(i));
        if (s == WcStatus.RNR_RETRY_EXC_ERR) {
            metrics.rnrErrors.increment();
        } else if (s == WcStatus.RETRY_EXC_ERR) {
            metrics.retryErrors.increment();
        }
        RdmaEvents.completionError(device.context.name(), qp.qpNum(), String.valueOf(remote), operation, s.name(),
                wc.vendorError(i));
        if (!closing) {
            String why = s == WcStatus.RETRY_EXC_ERR ? " (the peer stopped answering)" : "";
            closeNow(new IOException("RDMA " + operation + " failed: " + s + " (" + s.text() + ")" + why));
        }
    }

    // ================================================================== lifecycle

    /** Periodic tick on the I/O thread. */
    void tick(long now) {
        if (open) {
            handler.onTick(this, now);
        }
    }

    boolean drainExpired(long now) {
        return now - drainDeadline >= 0;
    }

    /** A line of this connection's state, for diagnostics (I/O thread). */
    String diagnostics() {
        sendLock.lock();
        try {
            return this + ": credits " + credits + ", inFlight " + sq.inFlight() + ", queued " + sq.hasQueued()
                    + ", pending " + sq.pendingBytes() + ", sendOutstanding " + sendOutstanding + ", creditInFlight "
                    + creditInFlight + ", recvOutstanding " + recvOutstanding + ", held " + heldCount + ", paused "
                    + readPaused + ", large " + (large == null ? "-" : largeFilled + "/" + largeLength) + ", reposted "
                    + reposted + ", flushScheduled " + flushScheduled + ", stallStart " + stallStart;
        } finally {
            sendLock.unlock();
        }
    }

    boolean drained() {
        sendLock.lock();
        try {
            return recvOutstanding == 0 && sendOutstanding == 0;
        } finally {
            sendLock.unlock();
        }
    }

    /** True while queued frames wait for send completions (the loop must wake for them). */
    boolean needsSendEvents() {
        sendLock.lock();
        try {
            return closing ? sendOutstanding > 0 : sq.hasQueued() && sq.windowFull();
        } finally {
            sendLock.unlock();
        }
    }

    /** Closes on the I/O thread: queue pair to ERR, handler told once, TCP closed, then drained by the loop. */
    void closeNow(Throwable cause) {
        if (closing) {
            return;
        }
        if (handler == null) {
            // Never attached (the handshake failed or the peer left during it): no completion of
            // ours is dispatched yet, so destroy at once.
            closing = true;
            abandon();
            return;
        }
        closing = true;
        open = false;
        sendLock.lock();
        try {
            sq.close();
            pendingVolatile = 0;
            queuedEntries = 0;
            stallStart = 0;
        } finally {
            sendLock.unlock();
        }
        try {
            qp.toError();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "moving " + qp + " to ERR failed", e);
        }
        RdmaEvents.qpState(device.context.name(), qp.qpNum(), String.valueOf(remote), "ERR",
                cause == null ? "closed" : String.valueOf(cause.getMessage()));
        if (large != null) {
            large.release();
            large = null;
        }
        for (int k = 0; k < heldCount; k++) {
            giveBackShared(held[k]);
        }
        heldCount = 0;
        tcp.close(null);
        drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        loop.draining(this);
        if (handler != null) {
            try {
                handler.onClose(this, cause);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "connection close handler failed", e);
            }
        }
    }

    /** After the drain (or its timeout): destroys the queue pair, then gives every buffer back. */
    void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        if (shared != null) {
            shared.detach(qp.qpNum(), this);
        }
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not destroy " + qp, e);
        }
        RdmaEvents.qpState(device.context.name(), qp.qpNum(), String.valueOf(remote), "DESTROYED", "");
        releaseBuffers();
        closeQuietly(sendWrs, recvWrs);
        loop.release(loopDevice, recvReserve, sendReserve);
        loop.detach(this);
    }

    /** The TCP liveness connection closed: the peer is gone. */
    void peerLost(Throwable cause) {
        IOException e = cause instanceof EOFException eof ? eof
                : new EOFException("peer lost: the TCP connection beside the RDMA connection closed"
                        + (cause == null ? "" : " (" + cause.getMessage() + ")"));
        loop.execute(() -> closeNow(e));
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean inEventLoop() {
        return loop.inLoop();
    }

    @Override
    public long tickIntervalNanos() {
        return config.tickInterval().toNanos();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public long pendingBytes() {
        return pendingVolatile;
    }

    @Override
    public void close(Throwable cause) {
        loop.execute(() -> closeNow(cause));
    }

    @Override
    public void setReadEnabled(boolean enabled) {
        loop.execute(() -> {
            if (readEnabled == enabled) {
                return;
            }
            readEnabled = enabled;
            if (enabled) {
                resumeHeld();
            }
        });
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /** @return the device's name, for logs and tests */
    String deviceName() {
        return device.context.name();
    }

    /** @return true when receiving through the loop's shared receive queue */
    boolean usesSharedReceiveQueue() {
        return shared != null;
    }

    /** @return receive buffers posted now (depth + reserved; 0 with a shared receive queue), for tests */
    int receiveSlots() {
        return recvSlots;
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + local + " -> " + remote + ", " + device + ", qpn " + qp.qpNum() + (open ? "" : ", closed")
                + "]";
    }
}
