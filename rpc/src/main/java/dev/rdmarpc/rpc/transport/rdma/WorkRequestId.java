package dev.rdmarpc.rpc.transport.rdma;

/**
 * The one codec of a work request id ({@code wr_id}), which tells a completion whose it is:
 *
 * <pre>
 *  63          48 47                       24 23    21 20                     0
 * +--------------+---------------------------+--------+-----------------------+
 * | generation   | connection table index    | kind   | slot                  |
 * +--------------+---------------------------+--------+-----------------------+
 * </pre>
 *
 * The table index names the connection in its {@link RdmaLoop}'s {@link ConnectionTable}; the
 * generation lets the table slot of a closed connection be reused at once (completions still in
 * flight for the old one carry an older generation and are dropped). The kind says which queue the
 * work request was posted on, the slot which of the connection's work requests (or receive buffers)
 * it was. A receive of a shared receive queue ({@link #SHARED_RECEIVE}) carries neither index nor
 * generation: the completion's QP number names its connection.
 *
 * <p>Static methods on {@code long}s: nothing allocates.
 */
final class WorkRequestId {
    /** A data message sent (SEND_WITH_IMM from the send queue's window). */
    static final int DATA = 0;
    /** A credit-only message sent. */
    static final int CREDIT = 1;
    /** A receive of the connection's own receive queue. */
    static final int RECEIVE = 2;
    /** A receive of the loop's shared receive queue. */
    static final int SHARED_RECEIVE = 3;
    /** A memory window bound to a rendezvous frame's memory (the frame's sender). */
    static final int BIND = 4;
    /** A memory window invalidated once the peer read its frame (the frame's sender). */
    static final int INVALIDATE = 5;
    /** An RDMA READ of a rendezvous frame (its receiver). */
    static final int READ = 6;

    private static final int KIND_SHIFT = 21;
    private static final int INDEX_SHIFT = 24;
    private static final int GENERATION_SHIFT = 48;
    private static final long SLOT_MASK = (1L << KIND_SHIFT) - 1;
    private static final int INDEX_MASK = (1 << (GENERATION_SHIFT - INDEX_SHIFT)) - 1;
    private static final int GENERATION_MASK = 0xFFFF;

    /** Connections one loop's table can hold (the index field's range). */
    static final int MAX_CONNECTIONS = INDEX_MASK + 1;

    private WorkRequestId() {
    }

    /** @return the bits of a connection: its table index and generation (kind and slot 0) */
    static long connectionBits(int index, int generation) {
        return ((long) (generation & GENERATION_MASK) << GENERATION_SHIFT) | ((long) index << INDEX_SHIFT);
    }

    /** @return the id of work request {@code slot} of {@code kind} of the connection {@code connectionBits} */
    static long encode(long connectionBits, int kind, int slot) {
        return connectionBits | ((long) kind << KIND_SHIFT) | slot;
    }

    /** @return the id of buffer {@code slot} of a shared receive queue */
    static long sharedReceive(int slot) {
        return encode(0, SHARED_RECEIVE, slot);
    }

    static int kind(long id) {
        return (int) (id >>> KIND_SHIFT) & 7;
    }

    static int slot(long id) {
        return (int) (id & SLOT_MASK);
    }

    static int index(long id) {
        return (int) (id >>> INDEX_SHIFT) & INDEX_MASK;
    }

    static int generation(long id) {
        return (int) (id >>> GENERATION_SHIFT) & GENERATION_MASK;
    }
}
