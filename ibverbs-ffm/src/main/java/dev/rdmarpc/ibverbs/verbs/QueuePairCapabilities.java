package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_qp_cap;

import java.lang.foreign.MemorySegment;

/**
 * The queue sizes of a queue pair ({@code struct ibv_qp_cap}) as the provider granted them: at least
 * what {@link QueuePairInit} asked for, often rounded up.
 *
 * @param maxSendWr     outstanding send work requests
 * @param maxRecvWr     outstanding receive work requests (0 with a shared receive queue)
 * @param maxSendSge    gather entries per send work request
 * @param maxRecvSge    scatter entries per receive work request
 * @param maxInlineData bytes a send may carry inline ({@link SendWorkRequest#inline(boolean)})
 */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge,
                                    int maxInlineData) {

    /**
     * Reads a native {@code struct ibv_qp_cap}: e.g. the {@code cap} of the {@code ibv_qp_init_attr}
     * that {@code ibv_create_qp} or {@code rdma_create_qp} wrote the granted sizes back into, or of
     * what {@code ibv_query_qp} filled.
     */
    public static QueuePairCapabilities of(MemorySegment ibvQpCap) {
        MemorySegment cap = ibvQpCap.reinterpret(ibv_qp_cap.sizeof());
        return new QueuePairCapabilities(ibv_qp_cap.max_send_wr(cap), ibv_qp_cap.max_recv_wr(cap),
                ibv_qp_cap.max_send_sge(cap), ibv_qp_cap.max_recv_sge(cap), ibv_qp_cap.max_inline_data(cap));
    }
}
