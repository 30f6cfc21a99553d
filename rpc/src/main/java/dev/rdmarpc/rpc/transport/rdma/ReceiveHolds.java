package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.transport.FrameHold;
import dev.rdmarpc.rpc.transport.frame.FrameHolds;

/**
 * The frames an {@link RdmaReceiver}'s handler keeps past its {@code onFrame} (on the I/O thread): at
 * most {@link FrameHolds#MAX_HELD} per connection. A frame that came in a receive slot of a private
 * receive queue is kept by taking the slot's buffer out and posting a fresh chunk in its place, so the
 * peer's credits never wait for it; a reassembled frame's buffer is retained. Frames of a shared receive
 * queue and rendezvous frames are not kept (the handler copies).
 */
final class ReceiveHolds {
    private final ReceiveBuffers buffers;
    private final FrameHolds holds;
    /** The receive slot whose frames are being handed to the handler, or -1. */
    private int handingSlot = -1;
    /** The buffer taken out of {@link #handingSlot} for kept frames, or null. */
    private PooledBuffer handingTaken;
    /** The reassembled frame's buffer being handed to the handler, or null. */
    private PooledBuffer handingLarge;

    ReceiveHolds(RdmaConnection conn, ReceiveBuffers buffers) {
        this.buffers = buffers;
        this.holds = new FrameHolds(conn::execute, (b, slot) -> b.release());
    }

    /** The frames of receive slot {@code slot} are being handed to the handler. */
    void handingSlot(int slot) {
        handingSlot = slot;
    }

    /** The reassembled frame in {@code b} is being handed to the handler; null when it was. */
    void handingLarge(PooledBuffer b) {
        handingLarge = b;
    }

    /**
     * The slot's frames were handed: a buffer taken out for holds is the holds' alone now. The
     * receiver's own reference to it, kept while it read the message's later frames, goes: a handler
     * that let its frame go at once (gRPC parses a message inline) must not send the buffer back to
     * the pool while frames after it are still to be read there.
     */
    void slotHanded() {
        handingSlot = -1;
        PooledBuffer taken = handingTaken;
        handingTaken = null;
        if (taken != null) {
            taken.release();
        }
    }

    /**
     * Keeps the frame being handed to the handler.
     *
     * @return the hold, or null: outside a handler, at {@link FrameHolds#MAX_HELD} frames, with a shared
     *         receive queue, for a rendezvous frame, or with no chunk in the pool to put in the slot's place
     */
    FrameHold hold() {
        if (!holds.canHold()) {
            return null;
        }
        PooledBuffer b = handingLarge;
        if (b != null) {
            b.retain();
            return holds.hold(b, 0);
        }
        if (handingSlot < 0 || !(buffers instanceof PrivateReceiveBuffers own)) {
            return null;
        }
        b = handingTaken;
        if (b == null) {
            b = own.takeOut(handingSlot);
            if (b == null) {
                return null;
            }
            b.retain(); // the receiver's reference: it reads the message's later frames there until slotHanded
            handingTaken = b;
        } else {
            b.retain(); // another frame of the same message
        }
        return holds.hold(b, 0);
    }
}
