package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.PooledBuffer;
import java.nio.ByteBuffer;

/**
 * The entries of a {@link TcpSendRing}, as parallel arrays indexed {@code (head + i) & mask}: a
 * pooled buffer and how far it is filled, or (buffer null) an in-place payload: a view of the
 * caller's memory or of a held receive buffer, where the payload starts in it, its length, and the
 * token its call detaches it with. Not thread-safe: used under the ring's send lock; the ring reads
 * the arrays directly on its hot paths.
 *
 * <p>Capacity is 0 until the first claim, then a power of two up to {@link #MAX}, grown by
 * {@link #ensureCapacity}, never shrunk.
 */
final class SendEntries {
    /** The most entries a ring holds. */
    static final int MAX = 256;
    /**
     * Entries a ring starts with, on its first claim; it doubles when full, up to {@link #MAX}. A
     * connection that never sends (a silent or hostile peer) holds no ring arrays, and one that never
     * queues much holds small ones: about 36 bytes of heap an entry, 9 KiB at 256.
     */
    private static final int FIRST = 8;

    PooledBuffer[] buffer = new PooledBuffer[0];
    /** Bytes filled in {@code buffer[i]}; for an in-place entry, the payload's length. */
    long[] limit = new long[0];
    /** An in-place payload's view (its entry's buffer is null), else null. */
    ByteBuffer[] inPlace = new ByteBuffer[0];
    /** The token of the call an in-place payload belongs to. */
    long[] token = new long[0];
    /** The receive buffer an in-place payload lies in, released with the entry (claimFromReceived), or null. */
    PooledBuffer[] owner = new PooledBuffer[0];
    /** Where in its view an in-place payload starts (0 for a caller's payload). */
    int[] base = new int[0];
    int mask = -1;
    int head;
    int count;
    /** In-place entries among {@link #count}. */
    int inPlaceCount;

    int capacity() {
        return buffer.length;
    }

    /** @return the array index of the {@code i}-th entry from the head */
    int index(int i) {
        return (head + i) & mask;
    }

    /** @return the array index of the last entry; only when {@link #count} is above 0 */
    int last() {
        return (head + count - 1) & mask;
    }

    /** Appends a pooled buffer, filled to 0. @return its array index */
    int appendBuffer(PooledBuffer b) {
        int t = (head + count) & mask;
        buffer[t] = b;
        limit[t] = 0;
        count++;
        return t;
    }

    /** Appends an in-place payload (after the frame whose header it follows). */
    void appendInPlace(ByteBuffer view, int viewBase, int length, long callToken, PooledBuffer heldOwner) {
        int x = (head + count) & mask;
        buffer[x] = null;
        inPlace[x] = view;
        token[x] = callToken;
        owner[x] = heldOwner;
        limit[x] = length;
        base[x] = viewBase;
        count++;
        inPlaceCount++;
    }

    /**
     * Grows the arrays to hold at least {@code entries} (at most {@link #MAX}), doubling from
     * {@link #FIRST}; the entries move to the front in order, and {@code partial} follows its own.
     * With no claim open. Allocates only when a connection queues more than ever before.
     */
    void ensureCapacity(int entries, PartialFrame partial) {
        int cap = buffer.length;
        if (entries <= cap) {
            return;
        }
        int n = Math.max(cap, FIRST);
        while (n < entries) {
            n <<= 1;
        }
        n = Math.min(n, MAX);
        PooledBuffer[] r = new PooledBuffer[n];
        long[] lim = new long[n];
        ByteBuffer[] views = new ByteBuffer[n];
        long[] tok = new long[n];
        PooledBuffer[] own = new PooledBuffer[n];
        int[] bas = new int[n];
        for (int i = 0; i < count; i++) {
            int from = index(i);
            r[i] = buffer[from];
            lim[i] = limit[from];
            views[i] = inPlace[from];
            tok[i] = token[from];
            own[i] = owner[from];
            bas[i] = base[from];
        }
        partial.moved(head, mask);
        buffer = r;
        limit = lim;
        inPlace = views;
        token = tok;
        owner = own;
        base = bas;
        mask = n - 1;
        head = 0;
    }

    /** Forgets the in-place payload at array index {@code idx}, releasing the receive buffer it held. */
    void dropInPlace(int idx) {
        inPlace[idx] = null;
        inPlaceCount--;
        PooledBuffer held = owner[idx];
        if (held != null) {
            owner[idx] = null;
            held.release();
        }
    }

    /**
     * After a gathering write of the first {@code n} entries through {@code iov}: drops those written
     * whole (the last one left, a small chunk is kept for the next frames) and releases their
     * buffers. The caller holds the send lock, so no claim is open.
     *
     * @param headFlushed bytes of the head entry written before
     * @return bytes of the (new) head entry written: where the next write starts
     */
    long retireWritten(ByteBuffer[] iov, int n, long headFlushed) {
        for (int i = 0; i < n; i++) {
            ByteBuffer bb = iov[i];
            int idx = head;
            int entryBase = buffer[idx] == null ? base[idx] : 0;
            if (bb.hasRemaining() || bb.limit() < entryBase + limit[idx]) {
                return bb.position() - entryBase;
            }
            if (count == 1) {
                PooledBuffer b = buffer[idx];
                if (b == null) {
                    dropInPlace(idx);
                    count = 0;
                } else if (b.isLarge()) {
                    buffer[idx] = null;
                    count = 0;
                    b.release();
                } else {
                    limit[idx] = 0; // keep the last chunk for the next frames
                }
                return 0;
            }
            PooledBuffer b = buffer[idx];
            buffer[idx] = null;
            head = (head + 1) & mask;
            count--;
            headFlushed = 0;
            if (b == null) {
                dropInPlace(idx);
            } else {
                b.release();
            }
        }
        return headFlushed;
    }

    /** Releases every entry, but a buffer {@code partial} keeps (its producer still writes into it), and empties the ring. */
    void releaseAll(PartialFrame partial) {
        for (int i = 0; i < count; i++) {
            int idx = index(i);
            if (buffer[idx] == null) {
                dropInPlace(idx);
            } else if (!partial.keepOnClose(idx, buffer[idx])) {
                buffer[idx].release();
            }
            buffer[idx] = null;
        }
        count = 0;
    }
}
