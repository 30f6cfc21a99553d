package dev.rdmarpc.rpc.transport.rdma;

import java.util.Arrays;

/**
 * The connection table of one {@link RdmaLoop}: the index and generation a work request id carries
 * ({@link WorkRequestId}) name a connection here. Indexes are reserved (and their generation
 * advanced) by setup threads under the table's lock; slots are filled, cleared and read on the loop
 * thread. The table doubles when full, up to {@link WorkRequestId#MAX_CONNECTIONS}.
 */
final class ConnectionTable {
    private final Object lock = new Object();
    private volatile RdmaConnection[] table = new RdmaConnection[64];
    private int[] generations = new int[64];
    private boolean[] reserved = new boolean[64];

    int reserveIndex() {
        synchronized (lock) {
            for (int i = 0; i < reserved.length; i++) {
                if (!reserved[i]) {
                    return take(i);
                }
            }
            int n = reserved.length;
            if (n * 2 > WorkRequestId.MAX_CONNECTIONS) {
                throw new IllegalStateException("too many connections on one RDMA I/O thread");
            }
            reserved = Arrays.copyOf(reserved, n * 2);
            generations = Arrays.copyOf(generations, n * 2);
            RdmaConnection[] t = Arrays.copyOf(table, n * 2);
            table = t; // a larger table; the loop reads it only after an attach task (happens-after)
            return take(n);
        }
    }

    private int take(int i) {
        reserved[i] = true;
        generations[i] = (generations[i] + 1) & 0xFFFF;
        return i;
    }

    int generation(int index) {
        synchronized (lock) {
            return generations[index];
        }
    }

    void releaseIndex(int index) {
        synchronized (lock) {
            reserved[index] = false;
        }
    }

    /**
     * Puts {@code c} in the slot of its index (loop thread, attaching it). Under the lock: a setup
     * thread growing the table at the same moment copies the slot either after this write or into
     * the table this writes to, never before it into a table this then misses.
     */
    void put(RdmaConnection c) {
        synchronized (lock) {
            table[c.tableIndex()] = c;
        }
    }

    /** {@code c} was destroyed: its slot is free again (loop thread). */
    void remove(RdmaConnection c) {
        synchronized (lock) {
            RdmaConnection[] t = table;
            if (t[c.tableIndex()] == c) {
                t[c.tableIndex()] = null;
            }
            reserved[c.tableIndex()] = false;
        }
    }

    /** @return the connection in slot {@code index}, or null (loop thread) */
    RdmaConnection get(int index) {
        RdmaConnection[] t = table;
        if (index >= t.length) {
            synchronized (lock) {
                t = table;
            }
        }
        return index < t.length ? t[index] : null;
    }
}
