package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A connection's own liveness frames: the pings it sends when its {@link ReceiveTimers} say so, and
 * the pongs it answers pings with (from the I/O thread, whatever the handlers do). Header-only
 * frames through the connection's send ring; one that the ring cannot take (closing, no buffer) is
 * skipped. Loop thread only.
 */
final class Liveness {
    private final TcpSendRing ring;
    private final FrameHeaderEncoder control = new FrameHeaderEncoder();
    private long pings;

    Liveness(TcpSendRing ring) {
        this.ring = ring;
    }

    /** A ping (answered at once with a pong of its id) or a pong (its arrival was all it had to say). */
    void received(MemorySegment seg, long at) {
        if (seg.get(ValueLayout.JAVA_BYTE, at + FrameDescriptor.TYPE_OFFSET) == FrameDescriptor.TYPE_PING) {
            send(FrameDescriptor.TYPE_PONG, FrameHeader.requestId(seg, at));
        }
    }

    /** Sends a ping with the next id. */
    void ping() {
        send(FrameDescriptor.TYPE_PING, ++pings);
    }

    private void send(int type, long id) {
        long at = ring.claim(FrameDescriptor.HEADER_LENGTH, Long.MAX_VALUE, 0);
        if (at >= 0) {
            control.wrap(ring.claimBuffer(), at).type(type).requestId(id);
            ring.commit();
        }
    }
}
