package dev.rdmarpc.rpc.transport;

import java.io.IOException;

/**
 * A connection could not be made because a bounded resource is used up (an RDMA server's registered
 * buffer pool reached its high-water mark, a completion queue is full), or a connection's frame could
 * not be received for want of a buffer (the TCP transport then refuses that connection, see
 * {@link FrameHandler#onRefused}). Other connections are not affected; trying again later may
 * succeed.
 */
public final class ResourceExhaustedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param message what ran out, with the figures */
    public ResourceExhaustedException(String message) {
        super(message);
    }
}
