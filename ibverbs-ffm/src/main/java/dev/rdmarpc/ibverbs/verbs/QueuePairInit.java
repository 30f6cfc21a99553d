package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_qp_cap;
import dev.rdmarpc.ibverbs.raw.ibv_qp_init_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What a queue pair is created with ({@code struct ibv_qp_init_attr}): type, completion queues,
 * optional shared receive queue, and queue sizes. Fluent setters; {@link ProtectionDomain#createQueuePair}
 * validates before use. Defaults: RC, 128 send and 128 receive work requests, 1 SGE each way,
 * no inline data, completions only for {@link SendWorkRequest#SIGNALED signaled} sends.
 * A plain mutable object: configure on one thread, then hand it over.
 */
public final class QueuePairInit {
    private QpType type = QpType.RC;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private SharedReceiveQueue srq;
    private int maxSendWr = 128;
    private int maxRecvWr = 128;
    private int maxSendSge = 1;
    private int maxRecvSge = 1;
    private int maxInlineData;
    private boolean signalAll;

    /** The transport; default RC. */
    public QueuePairInit type(QpType type) {
        this.type = type;
        return this;
    }

    /** One completion queue for both sides. */
    public QueuePairInit completionQueue(CompletionQueue cq) {
        this.sendCq = cq;
        this.recvCq = cq;
        return this;
    }

    /** The completion queue of the send side (required). */
    public QueuePairInit sendCompletionQueue(CompletionQueue cq) {
        this.sendCq = cq;
        return this;
    }

    /** The completion queue of the receive side (required). */
    public QueuePairInit receiveCompletionQueue(CompletionQueue cq) {
        this.recvCq = cq;
        return this;
    }

    /** Receive from a shared receive queue instead of the queue pair's own ({@code maxRecvWr} is then ignored). */
    public QueuePairInit sharedReceiveQueue(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    /** Outstanding send work requests; default 128. */
    public QueuePairInit maxSendWr(int n) {
        this.maxSendWr = n;
        return this;
    }

    /** Outstanding receive work requests; default 128. */
    public QueuePairInit maxRecvWr(int n) {
        this.maxRecvWr = n;
        return this;
    }

    /** Gather entries per send work request; default 1. */
    public QueuePairInit maxSendSge(int n) {
        this.maxSendSge = n;
        return this;
    }

    /** Scatter entries per receive work request; default 1. */
    public QueuePairInit maxRecvSge(int n) {
        this.maxRecvSge = n;
        return this;
    }

    /** Bytes a send may carry inline; default 0. */
    public QueuePairInit maxInlineData(int n) {
        this.maxInlineData = n;
        return this;
    }

    /** Whether every send completes with a completion (sq_sig_all); default false. */
    public QueuePairInit signalAll(boolean on) {
        this.signalAll = on;
        return this;
    }

    public QpType type() {
        return type;
    }

    public CompletionQueue sendCompletionQueue() {
        return sendCq;
    }

    public CompletionQueue receiveCompletionQueue() {
        return recvCq;
    }

    public SharedReceiveQueue sharedReceiveQueue() {
        return srq;
    }

    public int maxSendWr() {
        return maxSendWr;
    }

    public int maxRecvWr() {
        return maxRecvWr;
    }

    public int maxSendSge() {
        return maxSendSge;
    }

    public int maxRecvSge() {
        return maxRecvSge;
    }

    public int maxInlineData() {
        return maxInlineData;
    }

    public boolean signalAll() {
        return signalAll;
    }

    /**
     * Checks the settings against {@code pd}: both completion queues set, on the same device, the
     * SRQ in the same domain, sizes positive.
     *
     * @throws IllegalArgumentException naming the first problem
     */
    public void validate(ProtectionDomain pd) {
        if (type == null) {
            throw new IllegalArgumentException("queue pair type is null");
        }
        if (sendCq == null || recvCq == null) {
            throw new IllegalArgumentException("a queue pair needs a send and a receive completion queue");
        }
        if (sendCq.context() != pd.context() || recvCq.context() != pd.context()) {
            throw new IllegalArgumentException("the completion queues belong to another device than " + pd);
        }
        if (srq != null && srq.protectionDomain() != pd) {
            throw new IllegalArgumentException(srq + " belongs to another protection domain");
        }
        if (maxSendWr < 1 || maxSendSge < 1 || maxInlineData < 0 || maxRecvSge < (srq == null ? 1 : 0)
                || maxRecvWr < (srq == null ? 1 : 0)) {
            throw new IllegalArgumentException("queue sizes must be positive: send " + maxSendWr + "x" + maxSendSge
                    + ", receive " + maxRecvWr + "x" + maxRecvSge + ", inline " + maxInlineData);
        }
    }

    /**
     * A native {@code struct ibv_qp_init_attr} with these settings, allocated in {@code arena}: also
     * what {@code rdma_create_qp} takes.
     */
    public MemorySegment toNative(Arena arena) {
        MemorySegment attr = ibv_qp_init_attr.allocate(arena);
        ibv_qp_init_attr.send_cq(attr, sendCq.segment());
        ibv_qp_init_attr.recv_cq(attr, recvCq.segment());
        ibv_qp_init_attr.srq(attr, srq == null ? MemorySegment.NULL : srq.segment());
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, maxSendWr);
        ibv_qp_cap.max_recv_wr(cap, srq == null ? maxRecvWr : 0);
        ibv_qp_cap.max_send_sge(cap, maxSendSge);
        ibv_qp_cap.max_recv_sge(cap, srq == null ? maxRecvSge : 0);
        ibv_qp_cap.max_inline_data(cap, maxInlineData);
        ibv_qp_init_attr.qp_type(attr, type.value());
        ibv_qp_init_attr.sq_sig_all(attr, signalAll ? 1 : 0);
        return attr;
    }
}
