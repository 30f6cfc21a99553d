package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.loop.IdleFrameTimers;

/**
 * The idle and frame timeouts of an RDMA connection ({@link TimeoutSettings#idle},
 * {@link TimeoutSettings#frameRead}); they mean what the TCP transport's {@code idleTimeout} and
 * {@code frameReadTimeout} mean, and say which setting fired.
 */
final class RdmaTimers {
    private RdmaTimers() {
    }

    /** @param idleNanos 0 for no limit (client connections) */
    static IdleFrameTimers of(long frameReadNanos, long idleNanos, long now) {
        return new IdleFrameTimers(frameReadNanos, idleNanos, now, "the server's RDMA timeouts.idle",
                " over RDMA (timeouts.frameRead)");
    }
}
