package dev.rdmarpc.rpc.transport.stream;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

import static dev.rdmarpc.rpc.transport.Connection.BACK_PRESSURED;
import static dev.rdmarpc.rpc.transport.Connection.CLOSED;
import static dev.rdmarpc.rpc.transport.Connection.NO_BUFFER;
import static dev.rdmarpc.rpc.transport.ZeroCopySend.UNSUPPORTED;

/**
 * The send side of one {@link TcpConnection}: a bounded ring of pooled buffers; producers on any
 * thread append whole frames under {@link #sendLock} (claim/commit), the loop writes everything
 * committed with one (gathering) write per iteration, outside the lock ({@link #write}). One frame at
 * a time may be committed partly written ({@link #commitPartial}, a {@link PartialFrame}): the loop writes it only
 * as far as its producer has reported it written and writes nothing after it until it is complete. A frame claimed with
 * {@link #claimInPlace} takes two ring entries: its header in a pooled buffer, then its payload as a
 * view of the caller's memory, written from there by the same gathering write (no copy) until
 * {@link #detachInPlace} copies what is still unsent. A response claimed with {@link
 * #claimFromReceived} is laid out the same way, its payload a range of the large receive buffer whose
 * frame is being dispatched: the ring holds that buffer ({@link PooledBuffer#retain}) until the range
 * is written.
 *
 * <p>The claim methods return with the send lock held when they succeed; {@link #commit} or
 * {@link #abort} releases it (the {@link Connection} contract).
 */
final class TcpSendRing {
    /** Payloads smaller than this are copied even when offered in place (two ring entries cost more). */
    static final int IN_PLACE_MIN = 16 * 1024;

    private final TcpConnection conn;
    private final SocketGroup loop;
    private final BufferPool pool;

    // ---- send side, guarded by sendLock
    private final ReentrantLock sendLock = new ReentrantLock();
    private final SendEntries entries = new SendEntries();
    // the in-place payload the open claim brings (claimInPlace, claimFromReceived), appended on commit
    private ByteBuffer claimInPlace;
    private long claimInPlaceToken;
    private PooledBuffer claimInPlaceOwner;
    private int claimInPlaceBase;
    private int claimInPlaceLength;
    private final InPlaceViews views = new InPlaceViews();
    private long headFlushed;
    private long pending;
    /** {@link #pending}, as last seen under the send lock (read by any thread). */
    private volatile long unsentBytes;
    /** The entry count, as last seen under the send lock (read by the loop's pause rule). */
    private volatile int ringFill;
    private boolean flushScheduled;
    private int claimIndex = -1;
    private long claimEnd;
    private boolean claimNewBuffer;
    private long claimStart;
    private boolean closed;
    private final PartialFrame partial = new PartialFrame();

    // ---- flush scratch, loop thread only
    private ByteBuffer[] iov = new ByteBuffer[0];
    /** The last {@link #write} offered more than the socket took: wait for it to become writable. */
    private boolean socketFull;
    /** Set by {@link #gather} for the write that follows (loop thread): the bytes offered. */
    private long gatheredBytes;
    /** Set by {@link #gather}: a view that stood for two payloads cut the gather short. */
    private boolean gatherCutShort;

    TcpSendRing(TcpConnection conn, SocketGroup loop, BufferPool pool) {
        this.conn = conn;
        this.loop = loop;
        this.pool = pool;
    }

    /** @return bytes committed and not written yet, as last seen (any thread) */
    long unsentBytes() {
        return unsentBytes;
    }

    /** @return true when more than half the ring's entries are taken */
    boolean overHalfFull() {
        return ringFill > SendEntries.MAX / 2;
    }

    /**
     * Payloads of at least {@link #IN_PLACE_MIN} bytes in native memory go in place; others answer
     * {@link dev.rdmarpc.rpc.transport.ZeroCopySend#UNSUPPORTED}. The {@link ByteBuffer} view of {@code tail} comes from
     * {@link InPlaceViews}: a caller that sends from the same segments again allocates nothing.
     */
    long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        long tailLength = tail.byteSize();
        if (tailLength < IN_PLACE_MIN || tailLength > frameLength - FrameDescriptor.HEADER_LENGTH || !tail.isNative()) {
            return UNSUPPORTED;
        }
        long off = claim(frameLength - (int) tailLength, unsentLimit, 1);
        if (off >= 0) {
            claimInPlace = views.of(tail);
            claimInPlaceBase = 0;
            claimInPlaceLength = (int) tailLength;
            claimInPlaceToken = token;
        }
        return off;
    }

    /**
     * Holds the large receive buffer being dispatched (on the I/O thread, inside the handler's
     * {@code onFrame}) when the payload lies in it and is at least {@link #IN_PLACE_MIN} bytes;
     * otherwise {@link dev.rdmarpc.rpc.transport.ZeroCopySend#UNSUPPORTED}. The ring entry uses the buffer's own view, with the payload's
     * offset as its base: nothing is allocated.
     *
     * @param b the large receive buffer being dispatched, or null
     */
    long claimFromReceived(int frameLength, MemorySegment src, long offset, int length, PooledBuffer b) {
        if (b == null || length < IN_PLACE_MIN || length > frameLength - FrameDescriptor.HEADER_LENGTH || !src.isNative()) {
            return UNSUPPORTED;
        }
        MemorySegment seg = b.segment();
        long at = src.address() + offset - seg.address();
        if (at < 0 || at + length > seg.byteSize()) {
            return UNSUPPORTED;
        }
        long off = claim(frameLength - length, Long.MAX_VALUE, 1);
        if (off >= 0) {
            b.retain();
            claimInPlace = b.byteBuffer();
            claimInPlaceBase = (int) at;
            claimInPlaceLength = length;
            claimInPlaceOwner = b;
        }
        return off;
    }

    /**
     * @param extraEntries ring entries the claim needs besides the frame's own (an in-place payload's);
     *                     when the ring lacks them the answer is {@link dev.rdmarpc.rpc.transport.ZeroCopySend#UNSUPPORTED}, not back-pressure
     */
    long claim(int frameLength, long unsentLimit, int extraEntries) {
        if (frameLength < FrameDescriptor.HEADER_LENGTH) {
            throw new IllegalArgumentException("frame shorter than a header: " + frameLength);
        }
        sendLock.lock();
        if (closed) {
            sendLock.unlock();
            return CLOSED;
        }
        if (pending >= unsentLimit) {
            sendLock.unlock();
            return BACK_PRESSURED;
        }
        if (extraEntries > 0 && entries.count + 1 + extraEntries > SendEntries.MAX) {
            sendLock.unlock();
            return UNSUPPORTED; // too few ring entries to send in place: the caller copies into a plain claim
        }
        if (entries.count > 0) {
            int t = entries.last();
            PooledBuffer b = entries.buffer[t];
            long limit = entries.limit[t];
            if (b != null && !b.isLarge() && b.capacity() - limit >= frameLength) {
                if (extraEntries > 0) {
                    entries.ensureCapacity(entries.count + extraEntries, partial); // room for the payload's entry after this one
                    t = entries.last();
                }
                claimIndex = t;
                claimStart = limit;
                claimEnd = limit + frameLength;
                claimNewBuffer = false;
                return limit;
            }
        }
        if (entries.count == SendEntries.MAX) {
            sendLock.unlock();
            return BACK_PRESSURED;
        }
        entries.ensureCapacity(entries.count + 1 + Math.max(extraEntries, 0), partial);
        PooledBuffer b = pool.acquire(frameLength);
        if (b == null) {
            sendLock.unlock();
            return NO_BUFFER;
        }
        int t = entries.appendBuffer(b);
        claimIndex = t;
        claimStart = 0;
        claimEnd = frameLength;
        claimNewBuffer = true;
        return 0;
    }

    MemorySegment claimBuffer() {
        return entries.buffer[claimIndex].segment();
    }

    void commit() {
        int t = claimIndex;
        long added = claimEnd - entries.limit[t];
        entries.limit[t] = claimEnd;
        claimIndex = -1;
        if (claimInPlace != null) {
            // the claim was the ring's last entry; its payload follows
            entries.appendInPlace(claimInPlace, claimInPlaceBase, claimInPlaceLength, claimInPlaceToken, claimInPlaceOwner);
            added += claimInPlaceLength;
            claimInPlace = null;
            claimInPlaceOwner = null;
        }
        pending += added;
        unsentBytes = pending;
        ringFill = entries.count;
        boolean schedule = !flushScheduled;
        flushScheduled = true;
        sendLock.unlock();
        if (schedule) {
            loop.flushLater(conn);
        }
    }

    void abort() {
        int t = claimIndex;
        claimIndex = -1;
        if (claimInPlaceOwner != null) {
            claimInPlaceOwner.release(); // the hold claimFromReceived took
            claimInPlaceOwner = null;
        }
        claimInPlace = null;
        if (claimNewBuffer && entries.limit[t] == 0 && entries.count > 0
                && t == entries.last()) {
            PooledBuffer b = entries.buffer[t];
            entries.buffer[t] = null;
            entries.count--;
            b.release();
        }
        sendLock.unlock();
    }

    long commitPartial(int writtenLength) {
        if (partial.active() || loop.inLoop() || claimInPlace != null) {
            return -1; // one partial frame at a time; the claim stays open for a plain commit
        }
        if (writtenLength < 0 || claimStart + writtenLength > claimEnd) {
            abort();
            throw new IllegalArgumentException("written length " + writtenLength + " outside the claimed frame");
        }
        long token = partial.begin(claimIndex, claimStart, claimStart + writtenLength, claimEnd);
        commit();
        return token;
    }

    void partialWritten(long token, int writtenLength) {
        PooledBuffer orphan = null;
        boolean schedule = false;
        sendLock.lock();
        try {
            if (!partial.is(token)) {
                return;
            }
            orphan = partial.advance(writtenLength);
            if (!closed && !flushScheduled) {
                flushScheduled = true;
                schedule = true;
            }
        } finally {
            sendLock.unlock();
        }
        if (orphan != null) {
            orphan.release();
        }
        if (schedule) {
            loop.flushLater(conn);
        }
    }

    /** The producer of the partial frame {@code token} gave up: the connection closes after this. */
    void abandonPartial(long token) {
        PooledBuffer orphan = null;
        sendLock.lock();
        try {
            if (partial.is(token)) {
                orphan = partial.abandon(closed);
            }
        } finally {
            sendLock.unlock();
        }
        if (orphan != null) {
            orphan.release();
        }
    }

    /**
     * Writes everything committed with one gathering write; on the loop thread. Afterwards
     * {@link #socketFull} says whether the socket took less than offered.
     *
     * @return bytes written, or -1 when there was nothing to write (or the ring closed meanwhile)
     * @throws IOException when the write failed
     */
    long write(Wire wire) throws IOException {
        int n = gather();
        if (n < 0) {
            return -1;
        }
        long written;
        try {
            written = wire.write(iov, 0, n);
        } catch (IOException e) {
            for (int i = 0; i < n; i++) {
                iov[i] = null;
            }
            throw e;
        }
        socketFull = written < gatheredBytes;
        if (gatherCutShort && !socketFull) {
            sendLock.lock();
            try {
                if (!flushScheduled) {
                    flushScheduled = true;
                    loop.flushLater(conn);
                }
            } finally {
                sendLock.unlock();
            }
        }
        return retire(n, written);
    }

    /**
     * Under the send lock, on the loop thread: points {@link #iov} at the committed bytes, from the
     * head's unwritten part to a partial frame's written bytes at most, and sets
     * {@link #gatheredBytes} and {@link #gatherCutShort}.
     *
     * @return the entries gathered, -1 when there is nothing to write
     */
    private int gather() {
        sendLock.lock();
        try {
            flushScheduled = false;
            if (closed || entries.count == 0 || pending == 0) {
                return -1;
            }
            int n = entries.count;
            long total = 0;
            boolean cutShort = false;
            if (iov.length < entries.capacity()) {
                iov = new ByteBuffer[entries.capacity()]; // the ring grew (rare): loop thread, under the lock
            }
            for (int i = 0; i < n; i++) {
                int idx = entries.index(i);
                PooledBuffer pb = entries.buffer[idx];
                ByteBuffer bb = pb != null ? pb.byteBuffer() : entries.inPlace[idx];
                if (pb == null && i > 0 && alreadyIn(bb, i)) {
                    n = i; // one view stands for two queued payloads: the second goes in the next write
                    cutShort = true;
                    break;
                }
                int base = pb == null ? entries.base[idx] : 0; // where an in-place range starts in its view
                int start = base + (i == 0 ? (int) headFlushed : 0);
                int end = base + (int) entries.limit[idx];
                boolean partialHere = partial.at(idx);
                if (partialHere) {
                    end = (int) partial.writeLimit(end); // nothing past the partial frame's written bytes
                }
                bb.limit(end);
                bb.position(start);
                total += end - start;
                iov[i] = bb;
                if (partialHere) {
                    n = i + 1;
                    break;
                }
            }
            gatheredBytes = total;
            gatherCutShort = cutShort;
            return n;
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Under the send lock, after a write of {@code n} gathered entries took {@code written} bytes:
     * releases the entries written whole (keeping the last chunk for the next frames) and notes
     * how far into the head the socket got.
     *
     * @return {@code written}, or -1 when the ring closed meanwhile
     */
    private long retire(int n, long written) {
        sendLock.lock();
        try {
            if (closed) {
                return -1;
            }
            pending -= written;
            unsentBytes = pending;
            headFlushed = entries.retireWritten(iov, n, headFlushed);
            ringFill = entries.count;
            return written;
        } finally {
            java.util.Arrays.fill(iov, 0, n, null); // keep no caller's memory reachable from here
            sendLock.unlock();
        }
    }

    /** @return true when the last {@link #write} offered more than the socket took */
    boolean socketFull() {
        return socketFull;
    }

    /** Whether {@code bb} is among the first {@code count} buffers of this write; under the send lock. */
    private boolean alreadyIn(ByteBuffer bb, int count) {
        for (int j = 0; j < count; j++) {
            if (iov[j] == bb) {
                return true;
            }
        }
        return false;
    }

    /**
     * Copies the unsent rest of the in-place payload of {@code token} into a pooled buffer, so that
     * its memory is no longer read; on the I/O thread (where the writes happen, so none is under way).
     * When no buffer is free the connection must close, which forgets the payload too.
     *
     * @return the unsent bytes no buffer was free for, or -1 when done
     */
    long detachInPlace(long token) {
        boolean exhausted = false;
        long rest = 0;
        sendLock.lock();
        try {
            for (int i = 0; i < entries.count && entries.inPlaceCount > 0; i++) {
                int idx = entries.index(i);
                if (entries.inPlace[idx] == null || entries.owner[idx] != null || entries.token[idx] != token) {
                    continue;
                }
                long start = i == 0 ? headFlushed : 0;
                rest = entries.limit[idx] - start;
                PooledBuffer copy = pool.acquire((int) rest);
                if (copy == null) {
                    exhausted = true;
                    break;
                }
                // the caller's whole payload (ofBuffer covers position..limit, which flush moves); rare, may allocate
                MemorySegment payload = MemorySegment.ofBuffer(entries.inPlace[idx].duplicate().clear());
                MemorySegment.copy(payload, start, copy.segment(), 0, rest);
                entries.dropInPlace(idx);
                entries.buffer[idx] = copy;
                entries.limit[idx] = rest;
                if (i == 0) {
                    headFlushed = 0;
                }
                break;
            }
        } finally {
            sendLock.unlock();
        }
        return exhausted ? rest : -1;
    }

    /**
     * Gives back the chunk kept after the last write for the next frames (see {@link #write}), when
     * that is all the ring holds: an idle connection keeps no send buffer. Loop thread.
     */
    void releaseKeptChunk() {
        if (entries.count == 0) {
            return; // read without the lock: a ring that holds nothing (every tick of an idle connection) costs no lock; a stale count is read again next tick
        }
        PooledBuffer kept = null;
        sendLock.lock();
        try {
            if (!closed && entries.count == 1 && entries.buffer[entries.head] != null && entries.limit[entries.head] == 0 && !partial.active()) {
                kept = entries.buffer[entries.head];
                entries.buffer[entries.head] = null;
                entries.count = 0;
                ringFill = 0;
                headFlushed = 0;
            }
        } finally {
            sendLock.unlock();
        }
        if (kept != null) {
            kept.release();
        }
    }

    /** The connection closes (loop thread): no more claims; every buffer goes back, but a partial frame's that is still being written. */
    void close() {
        sendLock.lock();
        try {
            closed = true;
            entries.releaseAll(partial);
            pending = 0;
            unsentBytes = 0;
            ringFill = 0;
        } finally {
            sendLock.unlock();
        }
    }
}
