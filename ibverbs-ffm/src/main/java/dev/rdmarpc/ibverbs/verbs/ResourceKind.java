package dev.rdmarpc.ibverbs.verbs;

/** The kinds of native object this layer owns, as counted by {@link VerbsResources}. */
public enum ResourceKind {
    /** An opened device, {@code struct ibv_context} ({@link Context}). */
    CONTEXT,
    /** {@code struct ibv_pd} ({@link ProtectionDomain}). */
    PROTECTION_DOMAIN,
    /** {@code struct ibv_mr} ({@link MemoryRegion}). */
    MEMORY_REGION,
    /** {@code struct ibv_mw}, a type-2 memory window ({@link MemoryWindow}). */
    MEMORY_WINDOW,
    /** {@code struct ibv_comp_channel} ({@link CompletionChannel}). */
    COMPLETION_CHANNEL,
    /** {@code struct ibv_cq} ({@link CompletionQueue}). */
    COMPLETION_QUEUE,
    /** {@code struct ibv_srq} ({@link SharedReceiveQueue}). */
    SHARED_RECEIVE_QUEUE,
    /** {@code struct ibv_qp} ({@link QueuePair}). */
    QUEUE_PAIR,
    /** The thread reading a context's asynchronous events and its eventfd ({@link AsyncEventMonitor}). */
    ASYNC_EVENT_MONITOR,
    /**
     * Native memory owned by a reusable flyweight: {@link WorkCompletions}, {@link SendWorkRequests},
     * {@link ReceiveWorkRequests}.
     */
    NATIVE_BUFFER
}
