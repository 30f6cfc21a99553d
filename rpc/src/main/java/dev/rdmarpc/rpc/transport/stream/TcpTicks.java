package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.transport.FrameHandler;
import java.io.IOException;

/**
 * What a {@link TcpConnection} does on its loop's tick once its handler has had its own: the receive
 * timers (frame-read, idle, ping), retrying a frame's share, giving an idle connection's buffers back;
 * and whether it needs ticks at the full rate. Loop thread only.
 */
final class TcpTicks {
    private final TcpConnection connection;
    private final TcpReceiver receiver;
    private final TcpSendRing ring;
    private final ReceiveTimers timers;
    private final Liveness liveness;
    private final boolean serverSide;
    /** The loop's idle tick interval: how far ahead a ping deadline asks for the full tick rate. */
    private final long idleTickNanos;
    /** {@link TcpSendRing#unsentBytes} at the last tick, to see whether writes progress. */
    private long unsentAtTick;

    TcpTicks(TcpConnection connection, TcpReceiver receiver, TcpSendRing ring, ReceiveTimers timers, Liveness liveness,
            boolean serverSide, long idleTickNanos) {
        this.connection = connection;
        this.receiver = receiver;
        this.ring = ring;
        this.timers = timers;
        this.liveness = liveness;
        this.serverSide = serverSide;
        this.idleTickNanos = idleTickNanos;
    }

    /**
     * Whether the connection needs ticks at the full rate: not open or closing, a handler that times
     * something, a client's calls waiting with a ping (or the ping's timeout) due within an idle tick
     * interval, a frame half received or waiting for its share, bytes not yet written. A server's calls
     * in flight need none: their responses come as traffic, and a busy connection is not idle at any
     * tick rate. A client's calls waiting further from a ping need none either: the idle ticks still
     * check the ping in time (the TCP connection beside an RDMA one, silent since the hello while its
     * calls travel over RDMA, would otherwise wake its thread 100 times a second for a ping due every
     * 2 s).
     */
    boolean hasTimedWork() {
        FrameHandler handler = connection.handler();
        TlsWire tls = connection.tls();
        if (!connection.receiving() || connection.closing() || handler == null || receiver.waitingForShare()
                || tls != null && (!tls.ready() || tls.awaitingVerdict())) {
            return true;
        }
        if (handler.hasTimedWork() || ring.unsentBytes() > 0 || receiver.hasPartialFrame()) {
            return true;
        }
        return !serverSide && handler.callsInFlight() > 0 && timers.pingDeadlineWithin(System.nanoTime(), idleTickNanos);
    }

    /** The tick's work after the handler's {@link FrameHandler#onTick}, on an open connection with no last word. */
    void afterHandler(long now) {
        long partial = receiver.partialBytes();
        long unsent = ring.unsentBytes();
        if (unsent < unsentAtTick) {
            timers.sent(); // what was queued at the last tick went (at least partly) out
        }
        unsentAtTick = unsent; // sampled before a ping is queued: a ping's own 32 bytes never count
        int calls = connection.handler().callsInFlight();
        if (receiver.waitingForShare()) {
            receiver.retryShare();
            if (!connection.receiving()) {
                return;
            }
        }
        IOException refused = timers.check(now, partial, connection.readStopped() || receiver.waitingForShare(),
                unsent > 0 || calls > 0, !serverSide && calls > 0 && !connection.handler().heardElsewhere());
        if (refused != null) {
            connection.refuse(refused);
        } else if (timers.pingDue()) {
            liveness.ping();
        } else if (timers.quietSinceTick() && receiver.releaseEmptyChunk()) {
            // nothing arrived for a whole tick and nothing is half received: the receive chunk is
            // back in the pool (a connection that sent one byte and stopped keeps it until
            // frameReadTimeout), and so goes the send side's kept one, so an idle connection holds
            // no buffer. Also when the receive chunk went back at an earlier tick: a client whose
            // calls get no answer for a while (cancelled, or slow) still writes, and keeps a send chunk
            ring.releaseKeptChunk();
        }
    }
}
