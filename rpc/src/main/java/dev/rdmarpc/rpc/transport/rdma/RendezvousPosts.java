package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.SendOpcode;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequest;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.lang.foreign.MemorySegment;

/**
 * The rendezvous work requests of one {@link RdmaSender}: for each rendezvous frame it sends, the
 * binds of its memory windows (or the registrations of its parts) and its descriptor; after the
 * peer's done reports, the windows' invalidations (or the parts' deregistrations) and the frames'
 * release in order; the RDMA READs of the peer's rendezvous frames; and this side's own done reports
 * owed. Everything here runs under the sender's send lock, and counts what it posts in the sender's
 * {@code postedSends}. Its {@link Rendezvous} is null on a connection that sends no rendezvous frames.
 */
final class RendezvousPosts {
    private final RdmaSender sender;
    /** The device checks window keys against their regions' bounds only ({@link DeviceTable.Device#windowBoundsByRegion}). */
    private final boolean windowBoundsByRegion;
    /** First work request of the rendezvous binds; then the invalidations, then the reads. */
    private final int bindBase;
    private final int invalidateBase;
    private final int readBase;
    /** The rendezvous state of a connection that sends rendezvous frames, else null. */
    Rendezvous rendezvous;
    /** Rendezvous frames sent and not yet released, as last seen under the send lock (read by the liveness pings). */
    volatile int rendezvousHeld;
    /** Rendezvous frames of the peer this side read and has not yet reported done. */
    int doneOwed;
    /** RDMA READs of a peer's rendezvous frame posted and not completed. */
    int readsInFlight;
    /**
     * Rendezvous frames the peer reported done whose parts' own regions are still to deregister: at the
     * next flush, after the received messages' reads are posted, so that the system calls do not delay them.
     */
    int deregistrationsDue;

    /** @param firstWorkRequest the sender's first work request after its window's and its credit messages' */
    RendezvousPosts(RdmaSender sender, int firstWorkRequest, boolean windowBoundsByRegion) {
        this.sender = sender;
        this.windowBoundsByRegion = windowBoundsByRegion;
        this.bindBase = firstWorkRequest;
        this.invalidateBase = bindBase + Rendezvous.SLOTS * Rendezvous.MAX_PARTS;
        this.readBase = invalidateBase + Rendezvous.SLOTS * Rendezvous.MAX_PARTS;
    }

    /**
     * The rendezvous frame just taken into window slot {@code slot}: binds a window to each of its
     * parts (posted at once, before the descriptor's run), or registers each on its own, and fills the
     * slot's work request with the descriptor, written after the frame in the frame's own buffer.
     *
     * @return false when posting or registering failed (the connection is closing)
     */
    boolean bindAndDescribe(int slot) {
        PooledBuffer b = sender.sq.takenBuffer();
        int headLength = sender.sq.takenHeadLength();
        int tailLength = sender.sq.takenLength() - headLength;
        int parts = tailLength > 0 ? 2 : 1;
        // On a device that repeats binds, a window only while nothing is outstanding (nothing can be
        // retransmitted ahead of its bind) and no other rendezvous frame is held (its invalidation,
        // which rxe fences behind everything posted before it, would hold this frame's release and the
        // frames after it), and never over the application's memory: a window's key reaches its whole
        // registration there, a region of the part's own only the part.
        boolean register = rendezvous.registerWhenBusy() && (sender.postedSends > 0 || rendezvous.inUse() > 0 || parts == 2);
        int s = rendezvous.begin(b, parts, sender.sq.takenTailRegion(), register);
        rendezvousHeld = rendezvous.inUse();
        MemorySegment desc = b.segment();
        long descOffset = headLength;
        if (windowBoundsByRegion && !register) {
            // a reused buffer may hold an earlier frame's bytes past this one, readable through this
            // window on a device that checks only the region's bounds
            desc.asSlice(descOffset + Rendezvous.MAX_DESCRIPTOR).fill((byte) 0);
        }
        Rendezvous.writeHeader(desc, descOffset, sender.sq.takenLength(), parts, desc);
        long headAddress = b.segment().address();
        long tailAddress = parts == 2 ? sender.sq.takenTailAddress() : 0;
        MemoryRegion tailRegion = null;
        if (parts == 2) {
            // the frame holds a use of its registration: it stays registered until the frame is released
            tailRegion = sender.sq.takenTailRegion().regions[sender.devIndex];
            if (tailRegion == null) {
                sender.failSend("the device of a rendezvous frame's attachment registration was closed before it was sent");
                return false;
            }
        }
        boolean described = register
                ? registerParts(s, desc, descOffset, headAddress, headLength, tailAddress, tailLength, parts)
                : bindWindows(s, b, desc, descOffset, headAddress, headLength, tailRegion, tailAddress, tailLength, parts);
        if (!described) {
            return false;
        }
        if (parts == 2) {
            sender.metrics.zeroCopyBytes.add(tailLength); // read by the peer straight from the application's memory
        }
        int len = Rendezvous.descriptorLength(parts);
        int flags = SendWorkRequest.SIGNALED;
        if (len <= sender.inlineCap) {
            flags |= SendWorkRequest.INLINE;
        }
        sender.wrs.get(slot).clear().wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.DATA, slot))
                .opcode(SendOpcode.SEND_WITH_IMM)
                .immData(sender.credits.nextImm(false) | takeDone() | Credits.RENDEZVOUS).flags(flags)
                .sge(0, headAddress + descOffset, len, DeviceTable.lkey(b, sender.devIndex)).sgeCount(1);
        sender.metrics.rendezvousSent.increment();
        return true;
    }

    /**
     * Registers each part of rendezvous slot {@code s}'s frame on its own and writes its key into the
     * descriptor.
     *
     * @return false when a registration failed (the connection is closing)
     */
    private boolean registerParts(int s, MemorySegment desc, long descOffset, long headAddress, int headLength,
            long tailAddress, int tailLength, int parts) {
        try {
            Rendezvous.writePart(desc, descOffset, 0, headAddress, rendezvous.register(s, 0, headAddress, headLength),
                    headLength);
            if (parts == 2) {
                Rendezvous.writePart(desc, descOffset, 1, tailAddress,
                        rendezvous.register(s, 1, tailAddress, tailLength), tailLength);
            }
        } catch (RuntimeException e) {
            // the slot holds the frame and any region registered: close() gives them back
            sender.failSend("ibv_reg_mr of a rendezvous frame's " + (parts == 2 ? "parts" : "bytes") + " failed: "
                    + e.getMessage() + " (the locked-memory limit, ulimit -l, counts each registration)");
            return false;
        }
        sender.metrics.rendezvousRegistrations.add(parts);
        return true;
    }

    /**
     * Binds a memory window of rendezvous slot {@code s} to each part of its frame (posted at once,
     * before the descriptor's run) and writes its key into the descriptor.
     *
     * @return false when the post failed (the connection is closing)
     */
    private boolean bindWindows(int s, PooledBuffer b, MemorySegment desc, long descOffset, long headAddress,
            int headLength, MemoryRegion tailRegion, long tailAddress, int tailLength, int parts) {
        int access = Access.REMOTE_READ.bit();
        int key = rendezvous.nextKey(s, 0);
        sender.wrs.get(bindBase + s * Rendezvous.MAX_PARTS).clear()
                .wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.BIND, s * Rendezvous.MAX_PARTS))
                .bindMemoryWindow(rendezvous.window(s, 0).segment(), key, DeviceTable.region(b, sender.devIndex).segment(),
                        headAddress, headLength, access)
                .flags(SendWorkRequest.SIGNALED);
        Rendezvous.writePart(desc, descOffset, 0, headAddress, key, headLength);
        if (parts == 2) {
            int tailKey = rendezvous.nextKey(s, 1);
            sender.wrs.get(bindBase + s * Rendezvous.MAX_PARTS + 1).clear()
                    .wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.BIND, s * Rendezvous.MAX_PARTS + 1))
                    .bindMemoryWindow(rendezvous.window(s, 1).segment(), tailKey, tailRegion.segment(), tailAddress,
                            tailLength, access)
                    .flags(SendWorkRequest.SIGNALED);
            Rendezvous.writePart(desc, descOffset, 1, tailAddress, tailKey, tailLength);
        }
        int rc = sender.qp.postSend(sender.wrs, bindBase + s * Rendezvous.MAX_PARTS, parts);
        if (rc != 0) {
            sender.failSend("ibv_post_send (memory window bind) failed (errno " + rc + ") on " + sender.qp);
            return false;
        }
        sender.postedSends += parts;
        // the provider took each window's current key with the bind; the next bind is matched against this one
        for (int j = 0; j < parts; j++) {
            rendezvous.window(s, j).bound(rendezvous.key(s, j));
        }
        return true;
    }

    /** @return the done count for the next data message's immediate data, taken from what is owed */
    int takeDone() {
        if (doneOwed == 0) {
            return 0;
        }
        int n = Math.min(doneOwed, Credits.MAX_DONE);
        doneOwed -= n;
        return n << Credits.DONE_SHIFT;
    }

    /**
     * Posts the reads of a peer's rendezvous frame (I/O thread, under the send lock): one RDMA READ per part. The frame's
     * bytes before {@code sinkFrom} go to {@code target}, consecutive from its start; those from
     * {@code sinkFrom} on (the attachment) go to {@code sink}, consecutive from its start, a part that
     * holds both being scattered to both.
     *
     * @param sinkFrom where in the frame the bytes for the sink start; the frame's length when there
     *                 is no sink
     * @param sink     memory in {@code sinkRegion} for the frame's last bytes, or null
     * @return false when posting failed (the connection is closing)
     */
    boolean postReads(PooledBuffer target, MemorySegment descriptor, long offset, int sinkFrom, MemorySegment sink,
                  DeviceTable.UserRegion sinkRegion) {
        int parts = Rendezvous.parts(descriptor, offset);
        long to = target.segment().address();
        int lkey = DeviceTable.lkey(target, sender.devIndex);
        int sinkLkey = sink == null ? 0 : (int) sinkRegion.lkeys[sender.devIndex];
        long at = 0; // where in the frame this part starts
        for (int j = 0; j < parts; j++) {
            int len = Rendezvous.partLength(descriptor, offset, j);
            SendWorkRequest w = sender.wrs.get(readBase + j).clear()
                    .wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.READ, j))
                    .opcode(SendOpcode.RDMA_READ)
                    .remote(Rendezvous.partAddress(descriptor, offset, j), Rendezvous.partKey(descriptor, offset, j))
                    .flags(SendWorkRequest.SIGNALED);
            int toTarget = (int) Math.max(0, Math.min(len, sinkFrom - at));
            int n = 0;
            if (toTarget > 0) {
                w.sge(n++, to, toTarget, lkey);
                to += toTarget;
            }
            if (toTarget < len) {
                w.sge(n++, sink.address() + (at + toTarget - sinkFrom), len - toTarget, sinkLkey);
            }
            w.sgeCount(n);
            at += len;
        }
        int rc = sender.qp.postSend(sender.wrs, readBase, parts);
        if (rc != 0) {
            sender.failSend("ibv_post_send (RDMA READ) failed (errno " + rc + ") on " + sender.qp);
            return false;
        }
        sender.postedSends += parts;
        readsInFlight += parts;
        return true;
    }

    /**
     * Posts the invalidations of the windows of {@code n} rendezvous slots from {@code first}, the peer
     * being done with them; the deregistration of those whose parts were registered is left to the next flush.
     */
    void invalidate(int first, int n) {
        for (int k = 0; k < n; k++) {
            int s = (first + k) % Rendezvous.SLOTS;
            if (rendezvous.registered(s)) {
                deregistrationsDue++;
                continue;
            }
            int parts = rendezvous.parts(s);
            for (int j = 0; j < parts; j++) {
                int i = s * Rendezvous.MAX_PARTS + j;
                sender.wrs.get(invalidateBase + i).clear().wrId(WorkRequestId.encode(sender.wrIdBits, WorkRequestId.INVALIDATE, i))
                        .localInvalidate(rendezvous.key(s, j)).flags(SendWorkRequest.SIGNALED);
            }
            int rc = sender.qp.postSend(sender.wrs, invalidateBase + s * Rendezvous.MAX_PARTS, parts);
            if (rc != 0) {
                sender.failSend("ibv_post_send (memory window invalidation) failed (errno " + rc + ") on " + sender.qp);
                return;
            }
            sender.postedSends += parts;
        }
    }

    /**
     * Deregisters the regions of the frames the peer reported done, oldest first, and releases the
     * frames whose turn it is.
     *
     * @return false when a deregistration failed (the connection is closing)
     */
    boolean deregisterDone() {
        for (; deregistrationsDue > 0; deregistrationsDue--) {
            try {
                if (!rendezvous.deregisterNext()) {
                    throw new IllegalStateException(deregistrationsDue + " deregistrations due, none found in " + rendezvous);
                }
            } catch (RuntimeException e) {
                deregistrationsDue = 0;
                sender.failSend("ibv_dereg_mr of a rendezvous frame's region failed: " + e.getMessage());
                return false;
            }
        }
        releaseDone();
        return true;
    }

    /** Releases the frames whose keys are all revoked, oldest first, up to the first that is not. */
    void releaseDone() {
        for (PooledBuffer b; (b = rendezvous.released()) != null; ) {
            b.release();
        }
        rendezvousHeld = rendezvous.inUse();
    }
}
