package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import java.lang.foreign.MemorySegment;

/**
 * A connection's view of its loop's {@link SharedReceives} ({@link SharedReceiveQueueSettings}):
 * it posts no receives of its own; its messages arrive in the queue's buffers, which the loop hands
 * to it by QP number; "posting again" means giving the buffer back to the queue. The credits it
 * grants are {@link SharedReceiveQueueSettings#credits(int)}, a share of the queue that does not grow.
 */
final class SharedReceiveBuffers implements ReceiveBuffers {
    private static final System.Logger LOG = System.getLogger(SharedReceiveBuffers.class.getName());

    private final SharedReceives queue;
    private final int credits;
    private int qpn;
    private RdmaConnection owner;
    private boolean attached;

    SharedReceiveBuffers(SharedReceives queue, int credits) {
        this.queue = queue;
        this.credits = credits;
    }

    @Override
    public void configure(QueuePairInit init) {
        init.sharedReceiveQueue(queue.srq).maxRecvWr(0).maxRecvSge(0);
    }

    @Override
    public void bind(QueuePair qp, long wrIdBits, RdmaConnection connection) {
        this.qpn = qp.qpNum();
        this.owner = connection;
    }

    @Override
    public void attach() {
        queue.attach(qpn, owner); // completions name this connection by their QP number
        attached = true;
    }

    @Override
    public int initialCredits() {
        return credits;
    }

    @Override
    public int maxCredits() {
        return credits; // max = initial makes every growth step 0
    }

    @Override
    public int waitingCapacity() {
        return credits; // data messages the peer sent with credits: at most the credits granted
    }

    @Override
    public void postInitial() {
        // the queue's buffers were posted when the loop created it
    }

    @Override
    public MemorySegment segment(int slot) {
        return queue.segment(slot);
    }

    @Override
    public void completed() {
        // the loop counted it for the queue
    }

    @Override
    public boolean overrunPossible() {
        return true;
    }

    @Override
    public boolean repost(int slot) {
        return queue.repost(slot);
    }

    @Override
    public void drop(int slot) {
        if (!queue.repost(slot)) {
            LOG.log(System.Logger.Level.WARNING, "{0}: a shared receive buffer could not be posted again", owner);
        }
    }

    @Override
    public int grow(int n) {
        return 0;
    }

    @Override
    public int outstanding() {
        return 0;
    }

    @Override
    public void close() {
        if (attached) {
            queue.detach(qpn, owner);
            attached = false;
        }
    }
}
