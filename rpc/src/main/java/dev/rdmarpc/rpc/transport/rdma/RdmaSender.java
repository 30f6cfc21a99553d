package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.ZeroCopySend;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The send path of one {@link RdmaConnection}: its {@link SendQueue}, its {@link Credits}, the window
 * of work requests in flight, posting, and stall bookkeeping, all under one send lock.
 *
 * <p>Frames are claimed and committed in the send queue (any thread); a commit on the I/O thread is
 * posted at the end of the loop iteration (so a batch of responses leaves together), a commit from
 * another thread is posted at once when the window and the credits allow. Every message is a
 * SEND_WITH_IMM whose immediate data returns credits; messages up to the inline threshold are sent
 * inline; the last message of each posted batch is solicited, whatever this side's own completion
 * mode, so a peer that waits for events wakes once per batch. Credits go back in a credit-only message (one of {@value #CREDIT_SLOTS} work
 * requests after the window's) when no data message carries them.
 *
 * <p>Rendezvous ({@link Rendezvous}), when both sides enabled it: a frame of at least the threshold
 * leaves as binds of its memory windows and a descriptor in its window slot; the peer's "done" reports
 * (in the immediate data of its data messages) start the windows' invalidations, whose completions
 * release the frame. Where windows may be bound only while the connection is idle
 * ({@link Rendezvous#registerWhenBusy()}, Soft-RoCE), a frame that finds it busy has its parts
 * registered instead, and after its done report the next flush deregisters them; frames are released
 * in the order they were sent either way. This side's own done reports ride on its data messages, or
 * on an empty data message when nothing else leaves. The reads of the peer's rendezvous frames are posted here too
 * ({@link #postReads}), so that every send work request is counted in one place. The work requests
 * themselves are {@link MessagePosts}' (data and credit-only messages) and {@link RendezvousPosts}'.
 *
 * <p>The claim methods return with the send lock held when they succeed; {@link #commit} or
 * {@link #abort} releases it (the {@link Connection} contract).
 */
final class RdmaSender {
    /** Send work requests for credit-only messages, after the window's. */
    static final int CREDIT_SLOTS = 2;
    /** Smallest attachment sent in place from registered application memory; smaller ones are copied. */
    static final int ZERO_COPY_MIN = 4096;

    final RdmaConnection conn;
    private final RdmaLoop loop;
    final RdmaMetrics metrics;
    final QueuePair qp;
    final SendWorkRequests wrs;
    final long wrIdBits;
    final int devIndex;
    final int window;
    final int inlineCap;

    /** The rendezvous work requests (its {@link Rendezvous} set once the peer's hello is known). */
    final RendezvousPosts rv;
    /** The work requests of data and credit-only messages. */
    private final MessagePosts posts;

    // set once the peer's hello is known (before the loop sees the connection)
    SendQueue sq;
    Credits credits;

    // ---- guarded by sendLock
    private final ReentrantLock sendLock = new ReentrantLock();
    /** Send work requests posted and not completed (the drain waits for them). */
    int postedSends;
    /** The send queue's unsent bytes, as last seen under the send lock (read by any thread). */
    private volatile long unsentBytes;
    /** The send queue's entries, as last seen under the send lock (read by the I/O thread's pause rule). */
    private volatile int queuedEntries;

    // ---- I/O thread: receives posted again since the last flush, each a credit to return
    private int repostedSinceFlush;

    RdmaSender(RdmaConnection conn, RdmaLoop loop, QueuePair qp, SendWorkRequests wrs, long wrIdBits, int devIndex,
               boolean windowBoundsByRegion) {
        this.conn = conn;
        this.loop = loop;
        this.metrics = loop.metrics;
        this.qp = qp;
        this.wrs = wrs;
        this.wrIdBits = wrIdBits;
        this.devIndex = devIndex;
        this.window = loop.config.send().window();
        this.rv = new RendezvousPosts(this, window + CREDIT_SLOTS, windowBoundsByRegion);
        this.posts = new MessagePosts(this);
        this.inlineCap = Math.min(loop.config.send().inlineThreshold(), qp.capabilities().maxInlineData());
    }

    /**
     * @return the send work requests a queue pair needs for {@code window} messages in flight, with or
     *         without rendezvous
     */
    static int workRequests(int window, boolean rendezvous) {
        return window + CREDIT_SLOTS + (rendezvous ? Rendezvous.WORK_REQUESTS : 0);
    }

    /**
     * The peer's hello is known: its receive size bounds a message, its credits start ours.
     *
     * @param rendezvous the connection's rendezvous state when both sides enabled it (frames of at
     *                   least {@code rendezvousThreshold} go by rendezvous), else null
     */
    void start(SendQueue queue, Credits peerCredits, Rendezvous rendezvous, int rendezvousThreshold) {
        this.sq = queue;
        this.credits = peerCredits;
        rv.rendezvous = rendezvous;
        if (rendezvous != null) {
            queue.rendezvous(rendezvousThreshold);
        }
    }

    // ================================================================== claims (any thread)

    long claim(int frameLength, long unsentLimit) {
        if (frameLength < FrameDescriptor.HEADER_LENGTH) {
            throw new IllegalArgumentException("frame shorter than a header: " + frameLength);
        }
        sendLock.lock();
        if (sq.pendingBytes() >= unsentLimit) {
            sendLock.unlock();
            return Connection.BACK_PRESSURED;
        }
        long r = sq.claim(frameLength);
        if (r < 0) {
            sendLock.unlock();
            if (r == Connection.NO_BUFFER) {
                conn.poolPressure("no send buffer for a frame of " + frameLength + " bytes");
            }
        }
        return r;
    }

    long claimWithTail(int frameLength, MemorySegment tail, long unsentLimit) {
        long tailLength = tail.byteSize();
        if (tailLength < ZERO_COPY_MIN || tailLength >= frameLength || !tail.isNative()) {
            return ZeroCopySend.UNSUPPORTED;
        }
        DeviceTable.UserRegion region = useRegion(tail.address(), tailLength);
        if (region == null) { // not registered here, or closing: copied
            return ZeroCopySend.UNSUPPORTED;
        }
        long lkey = region.lkeys[devIndex];
        sendLock.lock();
        if (sq.pendingBytes() >= unsentLimit) {
            sendLock.unlock();
            region.unuse();
            return Connection.BACK_PRESSURED;
        }
        long r = sq.claimWithTail(frameLength, tail.address(), (int) tailLength, (int) lkey, region);
        if (r < 0) {
            sendLock.unlock();
            region.unuse();
        }
        return r;
    }

    MemorySegment claimBuffer() {
        return sq.claimBuffer();
    }

    void commit() {
        sq.commit();
        unsentBytes = sq.pendingBytes();
        queuedEntries = sq.entries();
        if (loop.inLoop()) {
            sendLock.unlock();
            loop.scheduleFlush(conn);
            return;
        }
        boolean wake;
        try {
            posts.post();
            wake = sq.hasQueued() && sq.windowFull();
        } finally {
            sendLock.unlock();
        }
        if (wake) {
            loop.wakeup(); // completions to harvest before the rest can go
        }
    }

    void abort() {
        sq.abort();
        sendLock.unlock();
    }

    // ================================================================== posting (under the send lock)

    /**
     * End of a loop iteration: returns the credits of the receives posted again, then posts what is
     * queued and a credit-only message if one is due; nothing but the credits once {@code closing}.
     */
    void flush(boolean closing) {
        sendLock.lock();
        try {
            for (; repostedSinceFlush > 0; repostedSinceFlush--) {
                credits.reposted();
            }
            if (closing) {
                return;
            }
            if (rv.deregistrationsDue > 0 && !rv.deregisterDone()) {
                return;
            }
            posts.post();
            // done reports no data message took: an empty message carries them (waiting for the frames
            // queued here could wait forever, when those wait for the peer's own done reports)
            if (rv.doneOwed > 0 && !sq.isClosed()) {
                posts.postDoneOnly();
            }
            if (credits.creditOnlyDue() && posts.creditSlotFree()) {
                posts.postCreditOnly();
            }
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * The application registration a rendezvous frame's attachment may be read into: the one that
     * covers the first {@code length} bytes of {@code sink} and has a key on this connection's device,
     * with a use taken for the reads (given back when they completed, or after the queue pair is
     * destroyed); null when there is none, or it is closing, or the memory is read-only.
     */
    DeviceTable.UserRegion useSinkRegion(MemorySegment sink, int length) {
        if (!sink.isNative() || sink.isReadOnly() || sink.byteSize() < length) {
            return null;
        }
        return useRegion(sink.address(), length);
    }

    /**
     * The application registration that covers {@code [address, address + length)} and has a key on
     * this connection's device, with a use taken; null when there is none, or it is closing.
     */
    private DeviceTable.UserRegion useRegion(long address, long length) {
        DeviceTable.UserRegion region = loop.transport.devices().userRegionCovering(address, length);
        return region != null && region.lkeys[devIndex] >= 0 && region.tryUse() ? region : null;
    }

    /** Posts the reads of a peer's rendezvous frame (I/O thread): {@link RendezvousPosts#postReads}. */
    boolean postReads(PooledBuffer target, MemorySegment descriptor, long offset, int sinkFrom, MemorySegment sink,
                      DeviceTable.UserRegion sinkRegion) {
        sendLock.lock();
        try {
            return rv.postReads(target, descriptor, offset, sinkFrom, sink, sinkRegion);
        } finally {
            sendLock.unlock();
        }
    }

    /** This side finished reading one of the peer's rendezvous frames: report it done (I/O thread). */
    void rendezvousRead() {
        sendLock.lock();
        try {
            rv.doneOwed++;
        } finally {
            sendLock.unlock();
        }
    }

    /** @return true when a frame this side sends holds a use of {@code u} (any thread) */
    boolean holds(DeviceTable.UserRegion u) {
        sendLock.lock();
        try {
            return (sq != null && sq.holds(u)) || (rv.rendezvous != null && rv.rendezvous.holds(u));
        } finally {
            sendLock.unlock();
        }
    }

    void failSend(String why) {
        IOException e = new IOException(why);
        loop.execute(() -> conn.closeNow(e));
    }

    // ================================================================== I/O thread

    /**
     * A send of {@code kind} ({@link WorkRequestId#DATA} or {@link WorkRequestId#CREDIT}) completed.
     *
     * @return true when queued frames (or a due credit-only message) wait to be posted
     */
    boolean completed(int kind, int slot, boolean success) {
        sendLock.lock();
        try {
            postedSends--;
            switch (kind) {
                case WorkRequestId.DATA -> {
                    sq.completed(slot);
                    unsentBytes = sq.pendingBytes();
                    queuedEntries = sq.entries();
                }
                case WorkRequestId.CREDIT -> {
                    posts.creditCompleted();
                }
                case WorkRequestId.INVALIDATE -> {
                    // a failed (or flushed) invalidation leaves the frame to release(), after the queue pair is gone
                    if (success && rv.rendezvous != null) {
                        rv.rendezvous.invalidated(slot / Rendezvous.MAX_PARTS);
                        rv.releaseDone();
                    }
                }
                case WorkRequestId.READ -> rv.readsInFlight--; // the frame is the receiver's
                default -> {
                    // BIND: nothing held here
                }
            }
            // A freed credit slot may be what a due credit-only message waits for; a freed window slot
            // or rendezvous slot what a queued frame or a done report waits for.
            return sq.hasQueued() || rv.doneOwed > 0 || (kind == WorkRequestId.CREDIT && credits.creditOnlyDue());
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * The immediate data of a received message: its credits count at once, even when the payload has
     * to wait, since they are what lets our own queued sends drain.
     *
     * @param checkOverrun true when a data message beyond the credits granted could arrive at all
     * @return true when queued frames (or done reports) wait to be posted
     * @throws IllegalArgumentException for immediate data no rdmarpc peer sends
     */
    boolean onImm(int imm, boolean checkOverrun) {
        sendLock.lock();
        try {
            credits.onImm(imm);
            if ((imm & Credits.CREDIT_ONLY) == 0) {
                credits.received();
                if (checkOverrun && credits.peerAvailable() < 0) {
                    // a private queue's device would have refused it (RNR); a shared queue may have had a buffer
                    throw new IllegalArgumentException("the peer sent a data message without a credit");
                }
            } else if ((imm & (Credits.DONE_MASK | Credits.RENDEZVOUS)) != 0) {
                throw new IllegalArgumentException("a credit-only message with rendezvous bits: 0x" + Integer.toHexString(imm));
            }
            int done = (imm & Credits.DONE_MASK) >>> Credits.DONE_SHIFT;
            if (done > 0) {
                if (rv.rendezvous == null) {
                    throw new IllegalArgumentException("the peer reported rendezvous frames done, none were sent");
                }
                rv.invalidate(rv.rendezvous.done(done), done);
            }
            // credits may be what a done report waited for; done frames' regions are deregistered at the flush
            return sq.hasQueued() || rv.doneOwed > 0 || rv.deregistrationsDue > 0;
        } finally {
            sendLock.unlock();
        }
    }

    /** A receive was posted again after its message was handled: a credit to return (I/O thread). */
    void reposted() {
        repostedSinceFlush++;
    }

    /** @return receives to add now that the peer reported a stall (0: the depth is at its maximum) */
    int growthStep() {
        sendLock.lock();
        try {
            return credits.growthStep();
        } finally {
            sendLock.unlock();
        }
    }

    /** {@code added} receives were posted: grant them with the next message. */
    void grew(int added) {
        sendLock.lock();
        try {
            credits.grew(added);
        } finally {
            sendLock.unlock();
        }
    }

    /** @return unsent bytes as last seen (any thread) */
    long unsentBytes() {
        return unsentBytes;
    }

    /** @return send queue entries as last seen (any thread) */
    int queuedEntries() {
        return queuedEntries;
    }

    /**
     * @return frames this side waits on the peer for, as last seen (any thread): queued or in flight,
     *         or sent by rendezvous and not yet reported read
     */
    int waitingOnPeer() {
        return queuedEntries + rv.rendezvousHeld;
    }

    /** @return posted sends not completed yet */
    int postedSends() {
        sendLock.lock();
        try {
            return postedSends;
        } finally {
            sendLock.unlock();
        }
    }

    /** True while queued frames wait for send completions (the loop must wake for them). */
    boolean needsSendEvents(boolean closing) {
        sendLock.lock();
        try {
            // reads and invalidations complete on the send queue too: the frame to hand over, the frame to release
            return closing ? postedSends > 0 : (sq.hasQueued() && sq.windowFull()) || rv.readsInFlight > 0
                    || (rv.rendezvous != null && rv.rendezvous.invalidating() > 0);
        } finally {
            sendLock.unlock();
        }
    }

    /** The connection closes: no more claims; what is queued is forgotten (its buffers go with {@link #release}). */
    void close() {
        sendLock.lock();
        try {
            sq.close();
            unsentBytes = 0;
            queuedEntries = 0;
            posts.stallOver();
        } finally {
            sendLock.unlock();
        }
    }

    /** After the queue pair is destroyed: gives every send buffer back and frees the work requests. */
    void release() {
        if (sq != null) {
            sendLock.lock();
            try {
                sq.close();
                sq.releaseInFlight();
                if (rv.rendezvous != null) {
                    rv.rendezvous.close();
                }
                rv.rendezvousHeld = 0;
            } finally {
                sendLock.unlock();
            }
        }
        wrs.close();
    }

    /** A line of the send path's state, for diagnostics. */
    String diagnostics() {
        sendLock.lock();
        try {
            return "credits " + credits + ", inFlight " + sq.inFlight() + ", queued " + sq.hasQueued() + ", pending "
                    + sq.pendingBytes() + ", postedSends " + postedSends + ", creditInFlight " + posts.creditInFlight
                    + ", reposted " + repostedSinceFlush + ", stallStart " + posts.stallStart + ", doneOwed " + rv.doneOwed
                    + (rv.rendezvous == null ? "" : ", " + rv.rendezvous);
        } finally {
            sendLock.unlock();
        }
    }
}
