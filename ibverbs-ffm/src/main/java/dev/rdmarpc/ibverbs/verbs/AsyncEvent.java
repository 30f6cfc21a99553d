package dev.rdmarpc.ibverbs.verbs;

/**
 * One asynchronous event of a device ({@code struct ibv_async_event}), as handed to an
 * {@link AsyncEventListener}.
 *
 * @param context  the device
 * @param type     what happened
 * @param port     the port, for port events ({@link AsyncEventType.Element#PORT}), else 0
 * @param element  the native address of the QP, CQ, SRQ or WQ the event is about, else 0
 * @param resource the resource of this layer at that address, or {@code null} (not created here, or a port event)
 */
public record AsyncEvent(Context context, AsyncEventType type, int port, long element, VerbsResource resource) {
    /** The queue pair the event is about, or {@code null}. */
    public QueuePair queuePair() {
        return resource instanceof QueuePair qp ? qp : null;
    }

    /** The completion queue the event is about, or {@code null}. */
    public CompletionQueue completionQueue() {
        return resource instanceof CompletionQueue cq ? cq : null;
    }

    /** The shared receive queue the event is about, or {@code null}. */
    public SharedReceiveQueue sharedReceiveQueue() {
        return resource instanceof SharedReceiveQueue srq ? srq : null;
    }
}
