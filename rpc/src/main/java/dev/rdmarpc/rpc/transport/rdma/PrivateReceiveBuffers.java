package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * A connection's own receive queue: {@code depth + }{@value RdmaConfig#RESERVED_RECEIVES} chunks
 * posted at the start ({@code depth} of them granted as credits, the rest a reserve for credit-only
 * messages), grown by the credits' growth steps up to {@code maxDepth + }{@value
 * RdmaConfig#RESERVED_RECEIVES}. The buffers belong to the connection until it is destroyed: a
 * message not handled keeps its buffer here until {@link #close}.
 */
final class PrivateReceiveBuffers implements ReceiveBuffers {
    private final BufferPool pool;
    private final int devIndex;
    private final int receiveSize;
    private final int depth;
    private final int maxDepth;
    private final PooledBuffer[] buffers;
    private final ReceiveWorkRequests wrs;
    private QueuePair qp;
    private long wrIdBits;
    private int slots;
    private int outstanding;

    /** @param depth the credits granted at the start; {@code maxDepth} the most they can grow to */
    PrivateReceiveBuffers(BufferPool pool, int devIndex, int depth, int maxDepth) {
        this.pool = pool;
        this.devIndex = devIndex;
        this.receiveSize = pool.chunkSize();
        this.depth = depth;
        this.maxDepth = maxDepth;
        int capacity = maxDepth + RdmaConfig.RESERVED_RECEIVES;
        this.buffers = new PooledBuffer[capacity];
        this.wrs = new ReceiveWorkRequests(capacity, 1);
    }

    @Override
    public void configure(QueuePairInit init) {
        init.maxRecvWr(buffers.length).maxRecvSge(1);
    }

    @Override
    public void bind(QueuePair queuePair, long bits, RdmaConnection owner) {
        this.qp = queuePair;
        this.wrIdBits = bits;
    }

    @Override
    public void attach() {
        // completions name this connection by the work request id's table index
    }

    @Override
    public int initialCredits() {
        return depth;
    }

    @Override
    public int maxCredits() {
        return maxDepth;
    }

    @Override
    public int waitingCapacity() {
        return buffers.length;
    }

    @Override
    public void postInitial() throws IOException {
        int n = depth + RdmaConfig.RESERVED_RECEIVES;
        for (int i = 0; i < n; i++) {
            PooledBuffer b = pool.acquire();
            if (b == null) {
                throw new IOException("buffer pool exhausted: no receive buffer for a new RDMA connection");
            }
            buffers[i] = b;
            slots++;
        }
        for (int i = 0; i < n; i++) {
            if (!repost(i)) {
                throw new IOException("ibv_post_recv failed while setting up the connection");
            }
        }
    }

    @Override
    public MemorySegment segment(int slot) {
        return buffers[slot].segment();
    }

    @Override
    public void completed() {
        outstanding--;
    }

    @Override
    public boolean overrunPossible() {
        return false;
    }

    @Override
    public boolean repost(int slot) {
        PooledBuffer b = buffers[slot];
        wrs.get(slot).wrId(WorkRequestId.encode(wrIdBits, WorkRequestId.RECEIVE, slot))
                .sge(0, b.segment().address(), receiveSize, DeviceTable.lkey(b, devIndex)).sgeCount(1);
        if (qp.postReceive(wrs, slot, 1) != 0) {
            return false;
        }
        outstanding++;
        return true;
    }

    /**
     * Takes the buffer out of receive {@code slot}, whose message a handler keeps past its handling
     * ({@link RdmaReceiver#holdFrame}), and puts a fresh chunk of the pool there, which the repost that
     * follows posts: the peer's credits do not wait for the kept message.
     *
     * @return the buffer taken out, now the caller's to release; null when the pool has no chunk (then
     *         nothing changed)
     */
    PooledBuffer takeOut(int slot) {
        PooledBuffer fresh = pool.acquire();
        if (fresh == null) {
            return null;
        }
        PooledBuffer taken = buffers[slot];
        buffers[slot] = fresh;
        return taken;
    }

    @Override
    public void drop(int slot) {
        // the buffer stays in its slot and is released with the connection
    }

    @Override
    public int grow(int n) {
        int added = 0;
        while (added < n) {
            PooledBuffer b = pool.acquire();
            if (b == null) {
                break;
            }
            int slot = slots;
            buffers[slot] = b;
            slots++;
            if (!repost(slot)) {
                return -1;
            }
            added++;
        }
        return added;
    }

    @Override
    public int outstanding() {
        return outstanding;
    }

    @Override
    public void close() {
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                buffers[i].release();
                buffers[i] = null;
            }
        }
        wrs.close();
    }
}
