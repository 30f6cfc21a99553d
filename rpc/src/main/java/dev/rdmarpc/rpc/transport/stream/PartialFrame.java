package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.PooledBuffer;

/**
 * The one frame of a {@link TcpSendRing} committed before its producer finished writing it
 * ({@link dev.rdmarpc.rpc.transport.ZeroCopySend#commitPartial}): its ring entry, its bounds in that
 * entry's buffer, the bytes written so far, and the token its producer reports progress with. The ring
 * sends it only as far as it is written and nothing after it until it is complete. When the ring
 * closes while the producer still writes into the buffer, the buffer is kept here (orphaned) until
 * the producer is done. Not thread-safe: used under the ring's send lock.
 */
final class PartialFrame {
    private int index = -1;
    private long start;
    private long written;
    private long end;
    private long token;
    private long seq;
    private boolean abandoned;
    private PooledBuffer orphan;

    /** @return true while a partial frame is committed */
    boolean active() {
        return index >= 0;
    }

    /** @return the token of the partial frame now at ring entry {@code ringIndex}, bytes {@code from..to}, {@code writtenTo} written */
    long begin(int ringIndex, long from, long writtenTo, long to) {
        index = ringIndex;
        start = from;
        written = writtenTo;
        end = to;
        token = ++seq;
        return token;
    }

    /**
     * The ring grew: its entries moved to the front, the one at {@code oldHead} to 0. Follows the
     * partial frame's entry (or the orphan's, which no entry holds any more: nothing to do).
     */
    void moved(int oldHead, int oldMask) {
        if (index >= 0) {
            index = (index - oldHead) & oldMask;
        }
    }

    /** @return true when {@code t} names the partial frame */
    boolean is(long t) {
        return t == token && t != 0;
    }

    /** @return true when ring entry {@code ringIndex} holds the partial frame (a write stops after it) */
    boolean at(int ringIndex) {
        return ringIndex == index;
    }

    /** @return the end of what may be written of the partial frame's entry, at most {@code limit} */
    long writeLimit(long limit) {
        return Math.min(limit, written);
    }

    /**
     * The producer has written the first {@code writtenLength} bytes (the whole frame: it is done).
     *
     * @return the orphaned buffer to release now, or null
     */
    PooledBuffer advance(int writtenLength) {
        long r = start + writtenLength;
        if (r >= end) {
            index = -1;
            token = 0;
            PooledBuffer o = orphan; // the ring closed meanwhile: the buffer is free only now
            orphan = null;
            return o;
        }
        if (r > written) {
            written = r;
        }
        return null;
    }

    /**
     * The producer gave up.
     *
     * @param closed true when the ring closed already
     * @return the orphaned buffer to release now, or null
     */
    PooledBuffer abandon(boolean closed) {
        token = 0;
        if (closed) {
            PooledBuffer o = orphan;
            orphan = null;
            index = -1;
            return o;
        }
        abandoned = true; // the ring still stops at the written bytes; its close frees the buffer
        return null;
    }

    /**
     * The ring closes and ring entry {@code ringIndex} holds {@code b}.
     *
     * @return true when the producer still writes into {@code b}: kept here, not released
     */
    boolean keepOnClose(int ringIndex, PooledBuffer b) {
        if (ringIndex != index || abandoned) {
            return false;
        }
        orphan = b;
        return true;
    }
}
