package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.buffer.PooledBuffer;

/**
 * The window of a {@link SendQueue}: the messages in flight, a ring of slots handed out and completed
 * in order (an RC send queue completes in order). Each slot remembers its message's bytes and what its
 * completion gives back: the buffer its message ends, and the registration use of a zero-copy tail.
 * Not thread-safe: used under the connection's send lock.
 */
final class SendWindow {
    private final PooledBuffer[] release;
    /** The registration use a slot's completion gives back (the tail of the frame it ends), or null. */
    private final DeviceTable.UserRegion[] region;
    private final int[] bytes;
    private int head;
    private int inFlight;

    SendWindow(int slots) {
        this.release = new PooledBuffer[slots];
        this.region = new DeviceTable.UserRegion[slots];
        this.bytes = new int[slots];
    }

    /** @return true when every slot is in flight */
    boolean full() {
        return inFlight == release.length;
    }

    /** @return messages in flight */
    int inFlight() {
        return inFlight;
    }

    /**
     * Takes the next slot (the window is not full). Slots are handed out in ring order, so the slots of
     * one batch are consecutive except where the ring wraps to 0.
     *
     * @param length      the message's bytes
     * @param buffer      released when the slot completes, or null
     * @param registration whose use is given back when the slot completes, or null
     * @return the slot
     */
    int take(int length, PooledBuffer buffer, DeviceTable.UserRegion registration) {
        int slot = head + inFlight;
        if (slot >= release.length) {
            slot -= release.length;
        }
        inFlight++;
        release[slot] = buffer;
        region[slot] = registration;
        bytes[slot] = length;
        return slot;
    }

    /**
     * The oldest message in flight completed (or was flushed): frees its slot, its buffer and its
     * registration use.
     *
     * @param slot the slot the completion names: must be the oldest in flight (RC completes in order)
     * @return the message's bytes
     * @throws IllegalStateException when it is not
     */
    int completed(int slot) {
        if (inFlight == 0 || slot != head) {
            throw new IllegalStateException("completion for window slot " + slot + ", expected "
                    + (inFlight == 0 ? "none" : "slot " + head));
        }
        PooledBuffer b = release[slot];
        DeviceTable.UserRegion r = region[slot];
        release[slot] = null;
        region[slot] = null;
        head = head + 1 == release.length ? 0 : head + 1;
        inFlight--;
        if (b != null) {
            b.release();
        }
        if (r != null) {
            r.unuse();
        }
        return bytes[slot];
    }

    /** @return true when a message in flight holds a use of {@code u} */
    boolean holds(DeviceTable.UserRegion u) {
        for (DeviceTable.UserRegion r : region) {
            if (r == u) {
                return true;
            }
        }
        return false;
    }

    /** Releases every buffer and registration use still held, and empties the window (the QP is destroyed). */
    void releaseAll() {
        for (int slot = 0; slot < release.length; slot++) {
            PooledBuffer b = release[slot];
            if (b != null) {
                release[slot] = null;
                b.release();
            }
            DeviceTable.UserRegion r = region[slot];
            if (r != null) {
                region[slot] = null;
                r.unuse();
            }
        }
        head = 0;
        inFlight = 0;
    }
}
