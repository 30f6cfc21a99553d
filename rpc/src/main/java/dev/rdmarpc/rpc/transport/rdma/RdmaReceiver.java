package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.FrameHold;
import dev.rdmarpc.rpc.transport.frame.FrameReassembler;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The receive path of one {@link RdmaConnection}, on its I/O thread. Each receive completion is one
 * message: whole frames, handed to the handler in place, in the registered buffer (zero copy: a
 * handler that keeps the bytes copies them, as blocking handlers do); or one piece of a frame larger
 * than a chunk, copied into the {@link FrameReassembler} until the frame is whole. When the handler
 * returns, the buffer is posted again ({@link ReceiveBuffers#repost}) and counted as a credit to
 * return. Messages that cannot be handled yet (reading disabled or paused) wait, in order, in the
 * connection's waiting list; their credits count at once.
 *
 * <p>A rendezvous descriptor ({@link Rendezvous}) is handled in its turn like a frame: a buffer of the
 * frame's length is taken (on a server, after its address's share allows it, as for a large frame), the
 * frame is read into it with RDMA READ, and the descriptor's receive is posted again at once. Until the
 * reads complete, later messages wait; then the frame goes to the handler, and the sender is told it is
 * done ({@link RdmaSender#rendezvousRead}): {@link RendezvousReads}.
 *
 * <p>A handler may keep the frame it is handed ({@link #holdFrame}): {@link ReceiveHolds}.
 */
final class RdmaReceiver {
    private final RdmaConnection conn;
    private final RdmaLoop loop;
    private final RdmaMetrics metrics;
    private final ReceiveBuffers buffers;
    private final RdmaSender sender;
    private final FrameReassembler reassembler;
    private final int maxFrameLength;
    private final int receiveSize;
    private final boolean serverSide;
    private final long writeHighWaterMark;
    /** This side announced rendezvous: descriptors are welcome. */
    private final boolean rendezvousEnabled;

    // data messages received and not handled yet, oldest first: slot, byte length, immediate data
    private final int[] waitingSlot;
    private final int[] waitingLength;
    private final int[] waitingImm;
    private int waitingCount;
    private boolean readEnabled = true;
    private boolean readPaused;
    /** Refused ({@link #stop}): nothing is handled any more, whatever the handler asks. */
    private boolean stopped;
    /**
     * The first waiting message starts a large frame whose claim on the peer address's share was
     * refused: nothing is handled until a tick finds the share free ({@link #retryShare}).
     */
    private boolean waitingForShare;
    /** What the large frame being reassembled claimed of its address's share, 0 for none. */
    private long frameShare;
    /** Bytes of receive-queue growth claimed from the peer address's share (server side). */
    private long grownClaim;
    /** The rendezvous frame being read, if any: later messages wait. */
    private final RendezvousReads reads;
    /** Frames kept past their handler. */
    private final ReceiveHolds holds;

    /** Tests only: sees a rendezvous descriptor before its frame is read, and may rewrite its parts. */
    interface DescriptorHook {
        /** @param descriptor the descriptor, well formed ({@link Rendezvous#check}), at 0; writable */
        void beforeRead(MemorySegment descriptor, int length);
    }

    RdmaReceiver(RdmaConnection conn, RdmaLoop loop, ReceiveBuffers buffers, RdmaSender sender, int maxFrameLength,
                 boolean serverSide, boolean rendezvousEnabled) {
        this.conn = conn;
        this.loop = loop;
        this.metrics = loop.metrics;
        this.buffers = buffers;
        this.sender = sender;
        this.reassembler = new FrameReassembler(loop.pool, serverSide);
        this.maxFrameLength = maxFrameLength;
        this.receiveSize = loop.pool.chunkSize();
        this.serverSide = serverSide;
        this.writeHighWaterMark = loop.config.send().writeHighWaterMark();
        this.rendezvousEnabled = rendezvousEnabled;
        this.reads = new RendezvousReads(conn, loop, sender, maxFrameLength, serverSide);
        int capacity = buffers.waitingCapacity();
        this.waitingSlot = new int[capacity];
        this.waitingLength = new int[capacity];
        this.waitingImm = new int[capacity];
        this.holds = new ReceiveHolds(conn, buffers);
    }

    /** Keeps the frame being handed to the handler: {@link ReceiveHolds#hold}. */
    FrameHold holdFrame() {
        return holds.hold();
    }

    /** A receive completed. */
    void onReceive(int slot, WorkCompletions wc, int i) {
        buffers.completed();
        if (wc.statusCode(i) != 0) {
            buffers.drop(slot);
            conn.onError("receive", wc, i);
            return;
        }
        if (conn.isClosing()) {
            buffers.drop(slot);
            return; // a message that raced the close: drop it
        }
        conn.timers.received();
        if (!wc.hasImmData(i)) {
            buffers.drop(slot);
            conn.protocolError("a message without immediate data (not an rdmarpc peer?)");
            return;
        }
        int imm = wc.immData(i);
        int length = wc.byteLength(i);
        boolean queued;
        try {
            queued = sender.onImm(imm, buffers.overrunPossible());
        } catch (IllegalArgumentException e) {
            buffers.drop(slot);
            conn.protocolError(e.getMessage());
            return;
        }
        if (queued) {
            loop.scheduleFlush(conn);
        }
        if ((imm & Credits.CREDIT_ONLY) != 0) {
            if (length != 0) {
                conn.protocolError("a credit-only message with " + length + " bytes");
                return;
            }
            repost(slot, false);
            return;
        }
        if (length == 0 && (imm & Credits.RENDEZVOUS) == 0) {
            // An empty data message (a done report): no frames, so nothing to keep in order; its
            // buffer goes back at once, even while reading is paused, so the credit it took returns
            // (the peer keeps its last credit for these, see RdmaSender.post)
            metrics.messagesReceived.increment();
            repost(slot, true);
            if ((imm & Credits.STALLED) != 0) {
                grow();
            }
            return;
        }
        if (!readEnabled || readPaused || waitingForShare || reads.active() || waitingCount > 0) {
            waitingSlot[waitingCount] = slot;
            waitingLength[waitingCount] = length;
            waitingImm[waitingCount] = imm;
            waitingCount++;
            return;
        }
        if (!handle(slot, length, imm)) {
            waitingSlot[0] = slot; // the list was empty: it waits first
            waitingLength[0] = length;
            waitingImm[0] = imm;
            waitingCount = 1;
            waitingForShare = true;
            return;
        }
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
        if (serverSide && !readPaused
                && (sender.unsentBytes() > writeHighWaterMark || sender.queuedEntries() > SendQueue.ENTRIES / 2)) {
            readPaused = true;
        }
    }

    /** Reading was enabled or disabled ({@link RdmaConnection#setReadEnabled}). */
    void setReadEnabled(boolean enabled) {
        if (readEnabled == enabled || stopped) {
            return;
        }
        readEnabled = enabled;
        if (enabled) {
            // the flag now, the messages waiting after the current event (as on TCP): never inside a
            // handler's call, since the frames after it in its message come first
            loop.executeLater(this::resumeWaiting);
        }
    }

    /** A send completed: messages waiting for the send queue to drain may go on. */
    void onSendCompleted() {
        if (waitingCount > 0 || readPaused) {
            resumeWaiting();
        }
    }

    /** Handles waiting messages, in order, while reading is allowed. */
    private void resumeWaiting() {
        if (readPaused && sender.unsentBytes() <= writeHighWaterMark / 2 && sender.queuedEntries() <= SendQueue.ENTRIES / 4) {
            readPaused = false;
        }
        // each message leaves the waiting list before it is handled: a handler that closes the
        // connection then finds only the messages still waiting (dropWaiting gives those back)
        while (waitingCount > 0 && readEnabled && !readPaused && !waitingForShare && !reads.active() && conn.isOpen()) {
            int slot = waitingSlot[0];
            int length = waitingLength[0];
            int imm = waitingImm[0];
            waitingCount--;
            System.arraycopy(waitingSlot, 1, waitingSlot, 0, waitingCount);
            System.arraycopy(waitingLength, 1, waitingLength, 0, waitingCount);
            System.arraycopy(waitingImm, 1, waitingImm, 0, waitingCount);
            if (!handle(slot, length, imm)) {
                // no handler ran: it goes back to the head of the list and waits for the share
                System.arraycopy(waitingSlot, 0, waitingSlot, 1, waitingCount);
                System.arraycopy(waitingLength, 0, waitingLength, 1, waitingCount);
                System.arraycopy(waitingImm, 0, waitingImm, 1, waitingCount);
                waitingSlot[0] = slot;
                waitingLength[0] = length;
                waitingImm[0] = imm;
                waitingCount++;
                waitingForShare = true;
                return;
            }
            checkReadPause();
        }
    }

    /** On the tick: a large frame waiting for its address's share tries again. */
    void retryShare() {
        if (waitingForShare) {
            waitingForShare = false;
            resumeWaiting();
        }
    }

    /**
     * @return bytes of a frame larger than a message received so far, not yet whole (0: none); what
     *         the frame timeout ({@link TimeoutSettings#frameRead}) times
     */
    long partialBytes() {
        return reassembler.active() ? reassembler.frameLength() - reassembler.missing() : 0;
    }

    /** @return true while this side itself does not handle what arrives (disabled, paused, waiting for a share) */
    boolean paused() {
        return !readEnabled || readPaused || waitingForShare;
    }

    /** @return true while this side reads a rendezvous frame of the peer's */
    boolean reading() {
        return reads.active();
    }

    /**
     * The connection was refused and says its last word ({@link RdmaLastWord}): nothing received is
     * handled any more, and the frame half received goes back to the pool now.
     */
    void stop() {
        stopped = true;
        readEnabled = false;
        dropWaiting();
    }

    /** @return true while a large frame waits for its address's share (the connection wants full-rate ticks) */
    boolean waitingForShare() {
        return waitingForShare;
    }

    /**
     * Hands a data message's frames to the handler, then posts its buffer again.
     *
     * @return false when the message starts a large frame that must wait for its address's share:
     *         nothing was handled, the buffer is not posted again
     */
    private boolean handle(int slot, int length, int imm) {
        if ((imm & Credits.RENDEZVOUS) != 0) {
            if (!rendezvousEnabled) {
                conn.protocolError("a rendezvous descriptor, though this side did not announce rendezvous");
            } else if (reassembler.active()) {
                conn.protocolError("a rendezvous descriptor inside a frame being reassembled");
            } else if (!reads.start(buffers.segment(slot), length)) {
                return false;
            }
        } else {
            holds.handingSlot(slot);
            try {
                if (!deliver(buffers.segment(slot), length)) {
                    return false;
                }
            } finally {
                holds.slotHanded();
            }
        }
        metrics.messagesReceived.increment();
        if (!conn.isOpen()) {
            buffers.drop(slot);
            return true; // closed by the handler or by bad input
        }
        repost(slot, true);
        if ((imm & Credits.STALLED) != 0) {
            grow();
        }
        return true;
    }

    private void repost(int slot, boolean credit) {
        if (!buffers.repost(slot)) {
            conn.closeNow(new IOException("ibv_post_recv failed on " + conn.qp));
            return;
        }
        if (credit) {
            sender.reposted();
            loop.scheduleFlush(conn);
        }
    }

    /**
     * The peer ran out of credits: post more receives (up to the maximum) and grant them. On a server
     * with private receive queues the new buffers are first claimed from the peer address's share
     * ({@link RdmaConfig#poolBytesPerAddress}), as its hellos were: over it, the queue stays as it is
     * (the peer goes on at the credits it has).
     */
    private void grow() {
        int step = sender.growthStep();
        if (step <= 0) {
            return; // at its maximum (or a shared queue's connection: nothing of its own to grow)
        }
        long claim = serverSide && buffers instanceof PrivateReceiveBuffers ? (long) step * loop.pool.chunkSize() : 0;
        if (claim > 0 && loop.transport.addressShares().claim(conn.remoteAddress().getAddress(), claim) != null) {
            metrics.receiveGrowthsRefused.increment();
            return;
        }
        grownClaim += claim;
        int added = buffers.grow(step);
        if (claim > 0 && added < step) {
            long unused = (long) (step - Math.max(added, 0)) * loop.pool.chunkSize();
            loop.transport.addressShares().release(conn.remoteAddress().getAddress(), unused);
            grownClaim -= unused;
        }
        if (added < 0) {
            conn.closeNow(new IOException("ibv_post_recv failed on " + conn.qp));
            return;
        }
        if (added > 0) {
            sender.grew(added);
            metrics.receiveGrowths.increment();
            loop.scheduleFlush(conn);
        }
    }

    /**
     * Hands the frames of one message to the handler, or adds it to the frame being reassembled.
     *
     * @return false when the message starts a large frame over its address's share (nothing done)
     */
    private boolean deliver(MemorySegment seg, int length) {
        if (reassembler.active()) {
            int need = reassembler.missing();
            if (length > need) {
                conn.protocolError("a message of " + length + " bytes overruns the frame being reassembled (" + need
                        + " missing)");
                return true;
            }
            long grownCopies = reassembler.copiedBytes();
            if (!reassembler.ensureRoom(length)) {
                String why = "no buffer to go on with a frame of " + reassembler.frameLength() + " bytes past its first "
                        + reassembler.room();
                conn.poolPressure(why);
                conn.closeNow(new IOException("buffer pool exhausted: " + why));
                return true;
            }
            boolean whole = reassembler.append(seg, 0, length);
            metrics.reassemblyCopiedBytes.add(length + reassembler.copiedBytes() - grownCopies);
            if (whole) {
                conn.timers.frameDone();
                releaseShare();
                int frameLength = reassembler.frameLength();
                PooledBuffer b = reassembler.take();
                holds.handingLarge(b);
                try {
                    conn.handler().onFrame(conn, b.segment(), 0, frameLength);
                } finally {
                    holds.handingLarge(null);
                    b.release();
                }
            }
            return true;
        }
        int off = 0;
        while (off < length) {
            long len = FrameDescriptor.check(seg, off, length - off, maxFrameLength);
            if (len < 0) {
                conn.protocolError(len == FrameDescriptor.INCOMPLETE_HEADER ? "a message ends inside a frame header"
                        : FrameDescriptor.describe(len));
                return true;
            }
            if (len <= length - off) {
                conn.handler().onFrame(conn, seg, off, (int) len);
                off += (int) len;
                if (!conn.isOpen()) {
                    return true;
                }
                continue;
            }
            if (off != 0 || length != receiveSize) {
                conn.protocolError("a frame of " + len + " bytes is cut short in a message of " + length + " bytes");
                return true;
            }
            // a server claims the whole frame from its peer address's share first: over it, the
            // message waits unhandled (its buffer not posted again, so the peer's credits run out)
            long share = serverSide ? FrameReassembler.shareOf((int) len) : 0;
            if (share > 0 && !conn.tcp.takeFrameShare(share)) {
                metrics.frameShareWaits.increment();
                return false;
            }
            if (!reassembler.start(seg, 0, length, (int) len)) {
                if (share > 0) {
                    conn.tcp.releaseFrameShare(share);
                }
                conn.poolPressure("no buffer to reassemble a frame of " + len + " bytes");
                conn.closeNow(new IOException("buffer pool exhausted: no buffer for a frame of " + len + " bytes"));
                return true;
            }
            frameShare = share;
            metrics.reassemblyCopiedBytes.add(length);
            return true;
        }
        return true;
    }

    private void releaseShare() {
        if (frameShare > 0) {
            conn.tcp.releaseFrameShare(frameShare);
            frameShare = 0;
        }
    }


    /** The receive buffers went back (the queue pair is destroyed): so goes what their growth claimed. */
    void releaseGrowthClaim() {
        if (grownClaim > 0) {
            loop.transport.addressShares().release(conn.remoteAddress().getAddress(), grownClaim);
            grownClaim = 0;
        }
    }

    /** The connection closes: the frame being reassembled and the waiting messages' buffers go back. */
    void dropWaiting() {
        reassembler.release();
        releaseShare();
        waitingForShare = false;
        for (int k = 0; k < waitingCount; k++) {
            buffers.drop(waitingSlot[k]);
        }
        waitingCount = 0;
    }

    /** A read of the rendezvous frame completed successfully: after the last, the frame goes to the handler. */
    void onReadCompleted() {
        if (reads.completed() && conn.isOpen()) {
            checkReadPause();
            resumeWaiting();
        }
    }

    /** @return true when the frame being read lands its attachment in {@code u} (I/O thread) */
    boolean holds(DeviceTable.UserRegion u) {
        return reads.holds(u);
    }

    /** After the queue pair is destroyed: the buffer of a read that never finished goes back. */
    void releaseRead() {
        reads.release();
    }

    /** A line of the receive path's state, for diagnostics. */
    String diagnostics() {
        return "recvOutstanding " + buffers.outstanding() + ", waiting " + waitingCount + ", paused " + readPaused
                + ", reassembling " + reassembler + reads.diagnostics();
    }
}
