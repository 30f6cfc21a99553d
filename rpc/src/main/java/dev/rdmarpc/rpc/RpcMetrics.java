package dev.rdmarpc.rpc;

/**
 * Counters of a server, a client or a client pool, readable from code at any time from any thread.
 * They only grow (except the gauges {@link #connectionsActive()} and {@link #inFlight()}); updating
 * them does not allocate.
 */
public interface RpcMetrics {
    /** @return calls started (client: sent; server: received) */
    long calls();

    /** @return calls that ended with an error status (any cause, timeouts included) */
    long errors();

    /** @return calls that timed out: on a client, calls with no response by their deadline; on a server, blocking calls stopped at their deadline */
    long timeouts();

    /** @return calls refused for backpressure ({@link Status#OVERLOADED}) */
    long rejected();

    /** @return bytes of frames written */
    long bytesSent();

    /** @return bytes of frames received */
    long bytesReceived();

    /** @return connections opened (accepted or connected) */
    long connectionsOpened();

    /** @return connections closed */
    long connectionsClosed();

    /** @return connections closed because the peer broke the protocol */
    long protocolErrors();

    /** @return connections open now */
    default long connectionsActive() {
        return connectionsOpened() - connectionsClosed();
    }

    /** @return calls in flight now (client: awaiting a response; server: being handled) */
    long inFlight();

    /**
     * @return calls cancelled: on a client, calls its callers cancelled before their response came
     *         (each sent the server a cancel); on a server, blocking calls a client cancelled while
     *         they were queued or running
     */
    long cancelled();

    /**
     * @return on a client, bytes of response attachments it copied out of the transport's buffers: into
     *         the target a call gave ({@link CallOptions#withResponseAttachment}; to a GPU through its
     *         staging), or to the heap for a {@link Reply} without one. Attachments the transport wrote
     *         into the target itself (RDMA rendezvous into registered memory) are not counted. 0 on a
     *         server.
     */
    default long responseAttachmentBytesCopied() {
        return 0;
    }
}
