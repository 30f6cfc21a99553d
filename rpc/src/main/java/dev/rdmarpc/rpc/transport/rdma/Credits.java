package dev.rdmarpc.rpc.transport.rdma;

/**
 * Flow control of one connection: credits piggybacked in the immediate data of every SEND, so that a
 * sender never sends without a receive buffer posted for it at the peer (no RNR NAK, ever).
 *
 * <p>Immediate data (32 bits, big-endian on the wire):
 * <pre>
 *  bits  0-15  credits returned: receive buffers the sender of this message re-posted since its
 *              previous report (each allows the peer one more data message)
 *  bit  16     STALLED: the sender ran out of credits since its previous message (the receiver may
 *              grow its receive queue)
 *  bit  17     CREDIT_ONLY: no payload; sent when credits must go back and no data is leaving
 *  bits 18-23  rendezvous transfers done: frames this side finished reading from the peer since its
 *              previous report (data messages only; see {@link Rendezvous})
 *  bit  24     RENDEZVOUS: the payload is not frames but a rendezvous descriptor (data messages only)
 *  bits 25-31  reserved, 0
 * </pre>
 *
 * <p>The rules, and why the receive queue never runs dry and nobody waits forever:
 * <ul>
 * <li>Each side posts {@code depth + RESERVED_RECEIVES} receives and grants the peer {@code depth}
 *     credits in its hello. A data message costs the sender one credit; credit-only messages cost
 *     none and are never credited back (their receive is simply re-posted).</li>
 * <li>A receiver re-posts each buffer as soon as its message is handled and counts it in
 *     {@link #toReturn}; every outgoing message carries all of it. A credit-only message goes when
 *     nothing else is leaving and either (a) half the depth is owed, or (b) the peer has used every
 *     credit it was ever given (this side counts them: {@link #peerAvailable}) while something is
 *     owed: (b) is what keeps a stalled peer alive when little is owed, or only growth grants. A peer
 *     that sends this side rendezvous frames keeps its last credit for its done reports
 *     ({@link #tryConsume(int)}), so for (b) it has used every credit when it is down to that one
 *     ({@code peerReserve}); counting it as available left both sides waiting, each for the other
 *     (seen in the VM: a stream of small messages with rendezvous on, after the receiver had grown its
 *     depth).</li>
 * <li>Unprocessed credit-only messages are at most three. Of kind (a) at most two: each returns at
 *     least depth/2 credits for distinct messages, and the peer cannot have sent more than
 *     {@code depth} messages beyond the credits it has already seen. Of kind (b) at most one: after
 *     it the peer holds credits, and it can only use them up (the condition for another) after it
 *     processed that message. So {@code depth} data receives plus three always suffice. With a peer
 *     reserve of one, (b) fires only while unprocessed credit-only messages carry at most one credit in
 *     all (each carries one at least, and the peer cannot spend them before processing them), so at most
 *     two are unprocessed after it, and the peer, left with one credit at most, cannot make this side
 *     owe half the depth again before it processes them (depth 2: one (a) more, three in all).</li>
 * <li>When the peer reports a stall, the receiver may grow its depth: it posts the new receives
 *     first, then grants them with its next message. Grants trigger only kind (b), which keeps the
 *     bound of kind (a) true while the depth grows: a grant the peer has processed comes after every
 *     earlier credit-only message (RC delivers in order), so the kind (a) messages it has not
 *     processed were all sent at the current depth.</li>
 * </ul>
 *
 * <p>Not thread-safe: the connection guards it with its send lock.
 */
final class Credits {
    /** Mask of the credits field. */
    static final int CREDITS_MASK = 0xFFFF;
    /** Flag: the sender was stalled without credits since its previous message. */
    static final int STALLED = 1 << 16;
    /** Flag: a credit-only message, without payload. */
    static final int CREDIT_ONLY = 1 << 17;
    /** Shift of the rendezvous-done count. */
    static final int DONE_SHIFT = 18;
    /** Largest rendezvous-done count one message carries. */
    static final int MAX_DONE = 0x3F;
    /** Mask of the rendezvous-done count. */
    static final int DONE_MASK = MAX_DONE << DONE_SHIFT;
    /** Flag: the payload is a rendezvous descriptor. */
    static final int RENDEZVOUS = 1 << 24;
    /** Bits that must be 0. */
    static final int RESERVED_MASK = ~(CREDITS_MASK | STALLED | CREDIT_ONLY | DONE_MASK | RENDEZVOUS);

    // ---- sending side
    private int available;
    private boolean stalled;
    private long stalls;

    // ---- receiving side
    private int depth;
    private final int maxDepth;
    private int toReturn;
    private int granted;
    private int peerAvailable;
    /** Credits the peer keeps back from its data messages (its last, for rendezvous done reports), 0 or 1. */
    private final int peerReserve;

    /**
     * @param peerDepth the credits the peer granted in its hello
     * @param depth     receives this side posted and credited to the peer
     * @param maxDepth  the most this side's depth may grow to
     */
    Credits(int peerDepth, int depth, int maxDepth) {
        this(peerDepth, depth, maxDepth, 0);
    }

    /**
     * @param peerDepth   the credits the peer granted in its hello
     * @param depth       receives this side posted and credited to the peer
     * @param maxDepth    the most this side's depth may grow to
     * @param peerReserve credits the peer keeps back from its data messages: 1 when it sends this side
     *                    rendezvous frames (it keeps its last credit for done reports), else 0. Rule (b)
     *                    counts the peer as out of credits when it is down to these: it would never
     *                    spend them on the messages it has queued, nor say that it stalled.
     */
    Credits(int peerDepth, int depth, int maxDepth, int peerReserve) {
        if (peerDepth < 1 || depth < 1 || maxDepth < depth || peerReserve < 0 || peerReserve >= depth) {
            throw new IllegalArgumentException("bad credit setup: peer " + peerDepth + ", depth " + depth + ", max " + maxDepth
                    + ", peer reserve " + peerReserve);
        }
        this.peerReserve = peerReserve;
        this.available = peerDepth;
        this.depth = depth;
        this.maxDepth = maxDepth;
        this.peerAvailable = depth;
    }

    /** @return data messages this side may send now */
    int available() {
        return available;
    }

    /**
     * Takes one credit for a data message.
     *
     * @return true when one was available; false marks this side stalled (reported on the next message)
     */
    boolean tryConsume() {
        return tryConsume(0);
    }

    /**
     * Takes one credit for a data message if more than {@code keep} are available.
     *
     * @param keep credits to leave for something else (a rendezvous done report)
     * @return true when one was taken; false marks this side stalled (reported on the next message)
     */
    boolean tryConsume(int keep) {
        if (available > keep) {
            available--;
            return true;
        }
        if (!stalled) {
            stalled = true;
            stalls++;
        }
        return false;
    }

    /** @return true while this side wants to send and has no credit */
    boolean isStalled() {
        return stalled;
    }

    /** @return how many times this side ran out of credits */
    long stalls() {
        return stalls;
    }

    /**
     * The immediate data of the next message: takes all credits to return and the stalled flag.
     *
     * @param creditOnly true for a credit-only message
     * @return the value to send (host order; the transport writes it big-endian)
     */
    int nextImm(boolean creditOnly) {
        int n = Math.min(toReturn, CREDITS_MASK);
        toReturn -= n;
        int g = Math.min(granted, CREDITS_MASK - n);
        granted -= g;
        int imm = n + g;
        peerAvailable += n + g;
        if (stalled) {
            imm |= STALLED;
            stalled = false;
        }
        if (creditOnly) {
            imm |= CREDIT_ONLY;
        }
        return imm;
    }

    /**
     * Applies the immediate data of a received message.
     *
     * @param imm the value received (host order)
     * @return true when the peer says it was stalled
     * @throws IllegalArgumentException when reserved bits are set (a protocol error)
     */
    boolean onImm(int imm) {
        if ((imm & RESERVED_MASK) != 0) {
            throw new IllegalArgumentException("immediate data with reserved bits set: 0x" + Integer.toHexString(imm));
        }
        available += imm & CREDITS_MASK;
        return (imm & STALLED) != 0;
    }

    /** A data message arrived: the peer used one of its credits. */
    void received() {
        peerAvailable--;
    }

    /** A data message was handled and its receive buffer re-posted. */
    void reposted() {
        toReturn++;
    }

    /** @return credits the peer holds as far as this side knows: given to it and not yet used */
    int peerAvailable() {
        return peerAvailable;
    }

    /** @return credits waiting to go back to the peer (returned receives and growth grants) */
    int toReturn() {
        return toReturn + granted;
    }

    /** @return true when a credit-only message should go now (nothing else is leaving) */
    boolean creditOnlyDue() {
        return (toReturn > 0 && toReturn >= ackThreshold()) || (peerAvailable <= peerReserve && toReturn + granted > 0);
    }

    /** @return the credits that make a credit-only message worth sending: half the depth, rounded up */
    int ackThreshold() {
        return (depth + 1) >>> 1;
    }

    /** @return this side's credited receive depth */
    int depth() {
        return depth;
    }

    /** @return how many receives to add when the peer reports a stall: 0 at the maximum */
    int growthStep() {
        return Math.min(depth, maxDepth - depth);
    }

    /**
     * The depth grew by {@code added} posted receives: they are granted to the peer with the next
     * message.
     *
     * @param added receives posted
     */
    void grew(int added) {
        if (added < 0 || depth + added > maxDepth) {
            throw new IllegalArgumentException("cannot grow depth " + depth + " by " + added + " (max " + maxDepth + ")");
        }
        depth += added;
        granted += added;
    }

    @Override
    public String toString() {
        return "Credits[available=" + available + ", stalled=" + stalled + ", depth=" + depth + ", toReturn=" + toReturn
                + ", granted=" + granted + ", peerAvailable=" + peerAvailable + "]";
    }
}
