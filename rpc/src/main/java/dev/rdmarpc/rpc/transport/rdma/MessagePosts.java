package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.SendOpcode;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequest;
import dev.rdmarpc.rpc.buffer.PooledBuffer;

/**
 * The work requests of one {@link RdmaSender}'s messages: queued data messages taken into the window
 * and posted in runs (a rendezvous frame's descriptor among them, bound by {@link RendezvousPosts}),
 * the empty message that carries done reports when nothing else leaves, credit-only messages in
 * their {@value RdmaSender#CREDIT_SLOTS} work requests after the window's, and the stall bookkeeping
 * after each post. Everything here runs under the sender's send lock, and counts what it posts in the
 * sender's {@code postedSends}.
 */
final class MessagePosts {
    private final RdmaSender sender;
    /** The first credit-only work request in flight, of {@value RdmaSender#CREDIT_SLOTS}, and how many are. */
    private int creditFirst;
    int creditInFlight;
    /** When the queue started waiting for the window or credits, 0 when it is not waiting. */
    long stallStart;
    private boolean stallForWindow;

    MessagePosts(RdmaSender sender) {
        this.sender = sender;
    }

    /** @return true when a credit-only message's work request is free */
    boolean creditSlotFree() {
        return creditInFlight < RdmaSender.CREDIT_SLOTS;
    }

    /** The oldest credit-only message completed: its work request is free. */
    void creditCompleted() {
        creditInFlight--;
        creditFirst = (creditFirst + 1) % RdmaSender.CREDIT_SLOTS;
    }

    /** The connection closes: no stall is under way any more. */
    void stallOver() {
        stallStart = 0;
    }

    /** Posts as many queued messages as the window and the credits allow. */
    void post() {
        if (sender.sq.isClosed()) {
            return;
        }
        int first = -1;
        int count = 0;
        int last = -1;
        // with rendezvous the last credit is kept for done reports (postDoneOnly): a server that stopped
        // handling requests (its write high-water mark) holds this side's messages, and only this side's
        // done reports let its queued rendezvous responses go, and it drain
        Rendezvous rendezvous = sender.rv.rendezvous;
        int keep = rendezvous != null ? 1 : 0;
        while (sender.sq.canTake() && (!sender.sq.headIsRendezvous() || rendezvous.canSend()) && sender.credits.tryConsume(keep)) {
            if (sender.sq.headIsRendezvous()) {
                if (count > 0 && !postRun(first, count, false)) {
                    return;
                }
                int slot = sender.sq.takeRendezvous();
                if (!sender.rv.bindAndDescribe(slot)) {
                    return;
                }
                first = slot;
                last = slot;
                count = 1;
                continue;
            }
            int slot = sender.sq.take();
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

    private void fill(int slot) {
        PooledBuffer b = sender.sq.takenBuffer();
        int len = sender.sq.takenLength();
        int flags = SendWorkRequest.SIGNALED;
        if (len <= sender.inlineCap) {
            flags |= SendWorkRequest.INLINE;
            sender.metrics.inlineSent.increment();
        }
        SendWorkRequest w = sender.wrs.get(slot).wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.DATA, slot))
                .opcode(SendOpcode.SEND_WITH_IMM).immData(sender.credits.nextImm(false) | sender.rv.takeDone()).flags(flags);
        int head = sender.sq.takenHeadLength();
        int tail = len - head;
        int n = 0;
        if (head > 0) {
            w.sge(n++, b.segment().address() + sender.sq.takenOffset(), head, DeviceTable.lkey(b, sender.devIndex));
        }
        if (tail > 0) {
            w.sge(n++, sender.sq.takenTailAddress(), tail, sender.sq.takenTailLkey());
            sender.metrics.zeroCopyBytes.add(tail);
        }
        w.sgeCount(n);
    }

    /** Sends an empty data message to carry the done reports owed, when the window and a credit allow. */
    void postDoneOnly() {
        if (sender.sq.windowFull() || !sender.credits.tryConsume()) {
            return;
        }
        int slot = sender.sq.takeEmpty();
        sender.wrs.get(slot).clear().wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.DATA, slot))
                .opcode(SendOpcode.SEND_WITH_IMM).immData(sender.credits.nextImm(false) | sender.rv.takeDone())
                .flags(SendWorkRequest.SIGNALED).sgeCount(0);
        postRun(slot, 1, true);
    }

    private boolean postRun(int first, int count, boolean lastRun) {
        if (lastRun) {
            // Whatever this side's own mode: the peer's may be event or back-off, waiting for a
            // solicited completion to wake (a busy-polling peer's queue is not armed: the flag costs it nothing)
            sender.wrs.get(first + count - 1).solicited(true);
        }
        int rc = sender.qp.postSend(sender.wrs, first, count);
        if (rc != 0) {
            int failed = sender.wrs.failedIndex();
            int posted = failed >= first && failed < first + count ? failed - first : 0;
            sender.postedSends += posted;
            sender.failSend("ibv_post_send failed (errno " + rc + ") on " + sender.qp);
            return false;
        }
        sender.postedSends += count;
        sender.metrics.messagesSent.add(count);
        return true;
    }

    void postCreditOnly() {
        int slot = sender.window + ((creditFirst + creditInFlight) % RdmaSender.CREDIT_SLOTS);
        int flags = SendWorkRequest.SIGNALED | SendWorkRequest.SOLICITED;
        sender.wrs.get(slot).wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.CREDIT, slot)).opcode(SendOpcode.SEND_WITH_IMM)
                .immData(sender.credits.nextImm(true)).flags(flags).sgeCount(0);
        int rc = sender.qp.postSend(sender.wrs, slot, 1);
        if (rc != 0) {
            sender.failSend("ibv_post_send (credits) failed (errno " + rc + ") on " + sender.qp);
            return;
        }
        creditInFlight++;
        sender.postedSends++;
        sender.metrics.creditOnlySent.increment();
    }

    /** Stall bookkeeping after a post. */
    private void trackStall() {
        boolean queued = sender.sq.hasQueued();
        if (queued && stallStart == 0) {
            stallStart = System.nanoTime();
            stallForWindow = sender.sq.windowFull();
            if (stallForWindow) {
                sender.metrics.windowStalls.increment();
            } else {
                sender.metrics.creditStalls.increment();
            }
        } else if (!queued && stallStart != 0) {
            if (RdmaEvents.stallEnabled()) {
                RdmaEvents.stall(sender.qp.qpNum(), String.valueOf(sender.conn.remoteAddress()), stallForWindow ? "window" : "credits",
                        System.nanoTime() - stallStart, sender.sq.pendingBytes());
            }
            stallStart = 0;
        }
    }
}
