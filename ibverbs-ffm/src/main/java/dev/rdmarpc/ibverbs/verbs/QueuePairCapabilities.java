package dev.rdmarpc.ibverbs.verbs;

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
}
