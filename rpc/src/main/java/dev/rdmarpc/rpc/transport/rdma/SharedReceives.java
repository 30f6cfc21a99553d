package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SharedReceiveQueue;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The shared receive queue of one I/O thread on one device ({@link SharedReceiveQueueSettings}):
 * chunk-sized receive buffers posted once for all the thread's connections on that device, and the
 * queue pair numbers that tell whose message a completion is.
 *
 * <p>The buffers belong to this object, not to a connection: a connection hands a buffer back
 * ({@link #repost}) when its handler is done with the message, and a closing connection hands back
 * whatever it still holds. Because the queue is shared, no connection can be guaranteed a posted
 * buffer; when fewer than a quarter of the buffers remain posted (messages in flight to handlers,
 * or held by a paused connection), {@link #refillIfLow} grows the queue by its current size up to
 * {@link SharedReceiveQueueSettings#maxDepth(int)}.
 *
 * <p>Ownership and threads: created by a setup thread under the loop's setup lock (which posts the
 * first receives before any queue pair uses it), then used only by the loop thread; the loop closes
 * it after every queue pair attached to it is destroyed. A work request id is
 * {@link WorkRequestId#sharedReceive}{@code (buffer index)}: no connection bits, the completion's QP
 * number names the connection ({@link SharedReceiveBuffers} attaches it).
 */
final class SharedReceives {
    private static final System.Logger LOG = System.getLogger(SharedReceives.class.getName());

    final SharedReceiveQueue srq;
    private final DeviceTable.Device device;
    private final BufferPool pool;
    private final RdmaMetrics metrics;
    private final int receiveSize;
    private final int maxDepth;
    private final PooledBuffer[] buffers;
    private final ReceiveWorkRequests wrs;
    private final QpnMap<RdmaConnection> connections = new QpnMap<>();
    private int size;
    private int posted;
    private boolean closed;

    /**
     * Creates the queue and posts {@code depth} receives.
     *
     * @throws IOException when the device refuses the queue or the pool has no buffer for it
     */
    SharedReceives(DeviceTable.Device device, BufferPool pool, RdmaMetrics metrics, int depth, int maxDepth)
            throws IOException {
        this.device = device;
        this.pool = pool;
        this.metrics = metrics;
        this.receiveSize = pool.chunkSize();
        SharedReceiveQueue q;
        try {
            q = device.pd.createSharedReceiveQueue(maxDepth, 1, 0);
        } catch (RuntimeException e) {
            throw new IOException("cannot create a shared receive queue of " + maxDepth + " receives on " + device + ": "
                    + e.getMessage(), e);
        }
        this.srq = q;
        this.maxDepth = Math.min(maxDepth, q.maxWr());
        this.buffers = new PooledBuffer[this.maxDepth];
        ReceiveWorkRequests r = null;
        try {
            r = new ReceiveWorkRequests(this.maxDepth, 1);
        } catch (RuntimeException e) {
            q.close();
            throw e;
        }
        this.wrs = r;
        int added = add(Math.min(depth, this.maxDepth));
        if (added < Math.min(depth, this.maxDepth)) {
            close();
            throw new IOException("buffer pool exhausted: no room for the " + depth + " receives of a shared receive queue");
        }
        armLimit();
    }

    /**
     * Asks the device for an SRQ limit event when fewer than a quarter of the buffers remain posted:
     * the device sees receives consumed as messages start arriving, before their completions are
     * polled, so it notices a draining queue earlier than {@link #refillIfLow} can. Not armed at the
     * maximum (nothing left to add).
     */
    private void armLimit() {
        if (size < maxDepth && !closed) {
            try {
                srq.armLimit(Math.max(1, size >>> 2));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "could not arm the limit of " + srq, e);
            }
        }
    }

    /** The device reported the limit (loop thread, through a task): grow now, then arm again. */
    void limitReached() {
        if (closed || size >= maxDepth) {
            return;
        }
        metrics.sharedReceiveLimitEvents.increment();
        grow();
        armLimit();
    }

    private void grow() {
        int added = add(Math.min(size, maxDepth - size));
        if (added > 0) {
            metrics.sharedReceiveGrowths.increment();
        }
    }

    /** Acquires and posts up to {@code n} more buffers; returns how many it added. */
    private int add(int n) {
        int added = 0;
        while (added < n && size < maxDepth) {
            PooledBuffer b = pool.acquire();
            if (b == null) {
                break;
            }
            int slot = size++;
            buffers[slot] = b;
            wrs.get(slot).wrId(WorkRequestId.sharedReceive(slot))
                    .sge(0, b.segment().address(), receiveSize, DeviceTable.lkey(b, device.index)).sgeCount(1);
            if (!repost(slot)) {
                break;
            }
            added++;
        }
        return added;
    }

    /** @return the buffer of receive {@code slot} */
    MemorySegment segment(int slot) {
        return buffers[slot].segment();
    }

    /**
     * Posts buffer {@code slot} again (its work request was filled when the buffer was added).
     *
     * @return false when the device refused (the queue is broken)
     */
    boolean repost(int slot) {
        if (closed) {
            return true; // the buffers go with the queue
        }
        int rc = srq.postReceive(wrs, slot, 1);
        if (rc != 0) {
            LOG.log(System.Logger.Level.WARNING, "ibv_post_srq_recv failed (errno {0}) on {1}", rc, srq);
            return false;
        }
        posted++;
        return true;
    }

    /** A receive of this queue completed (loop thread). */
    void completed() {
        posted--;
    }

    /**
     * Grows the queue when fewer than a quarter of its buffers are posted, by its current size up to
     * the maximum (loop thread; one comparison when nothing is to do).
     */
    void refillIfLow() {
        if (posted >= (size >>> 2) || size >= maxDepth || closed) {
            return;
        }
        grow();
        armLimit();
    }

    /** @return the connection of queue pair {@code qpn}, or null (loop thread) */
    RdmaConnection connection(int qpn) {
        return connections.get(qpn);
    }

    void attach(int qpn, RdmaConnection c) {
        connections.put(qpn, c);
    }

    void detach(int qpn, RdmaConnection c) {
        connections.remove(qpn, c);
    }

    /** @return buffers this queue owns (posted or being handled) */
    int size() {
        return size;
    }

    /** @return receives posted now */
    int posted() {
        return posted;
    }

    /** @return registered bytes this queue owns */
    long bytes() {
        return (long) size * receiveSize;
    }

    /** Destroys the queue (after every queue pair using it), then gives its buffers back. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            srq.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not destroy " + srq + " (a queue pair still uses it?)", e);
            return; // the device may still write into the buffers: keep them
        }
        for (int i = 0; i < size; i++) {
            buffers[i].release();
            buffers[i] = null;
        }
        wrs.close();
    }

    @Override
    public String toString() {
        return "SharedReceives[" + device + ", " + posted + "/" + size + " posted, max " + maxDepth + ", "
                + connections.size() + " connections]";
    }

    /** Queue pair number to connection, open addressing; no allocation on lookup. QPN 0 is never an RC QP. */
    static final class QpnMap<T> {
        private int[] keys = new int[64];
        private Object[] values = new Object[64];
        private int count;

        @SuppressWarnings("unchecked")
        T get(int qpn) {
            int mask = keys.length - 1;
            for (int i = mix(qpn) & mask; ; i = (i + 1) & mask) {
                int k = keys[i];
                if (k == qpn) {
                    return (T) values[i];
                }
                if (k == 0) {
                    return null;
                }
            }
        }

        void put(int qpn, T c) {
            if (qpn == 0) {
                throw new IllegalArgumentException("QP number 0");
            }
            if ((count + 1) * 2 > keys.length) {
                int[] ok = keys;
                Object[] ov = values;
                keys = new int[ok.length * 2];
                values = new Object[ok.length * 2];
                count = 0;
                for (int i = 0; i < ok.length; i++) {
                    if (ok[i] != 0) {
                        insert(ok[i], ov[i]);
                    }
                }
            }
            insert(qpn, c);
        }

        private void insert(int qpn, Object c) {
            int mask = keys.length - 1;
            for (int i = mix(qpn) & mask; ; i = (i + 1) & mask) {
                if (keys[i] == qpn) {
                    values[i] = c;
                    return;
                }
                if (keys[i] == 0) {
                    keys[i] = qpn;
                    values[i] = c;
                    count++;
                    return;
                }
            }
        }

        /** Removes {@code qpn} if it maps to {@code c} (backward-shift deletion, no tombstones). */
        void remove(int qpn, T c) {
            int mask = keys.length - 1;
            int i = mix(qpn) & mask;
            while (keys[i] != qpn) {
                if (keys[i] == 0) {
                    return;
                }
                i = (i + 1) & mask;
            }
            if (values[i] != c) {
                return;
            }
            keys[i] = 0;
            values[i] = null;
            count--;
            for (int j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
                int home = mix(keys[j]) & mask;
                // move j back into the hole at i if its home is not in (i, j]
                boolean inRange = i <= j ? (home > i && home <= j) : (home > i || home <= j);
                if (!inRange) {
                    keys[i] = keys[j];
                    values[i] = values[j];
                    keys[j] = 0;
                    values[j] = null;
                    i = j;
                }
            }
        }

        int size() {
            return count;
        }

        private static int mix(int k) {
            int h = k * 0x9E3779B9;
            return h ^ (h >>> 16);
        }
    }
}
