package dev.rdmarpc.rpc.transport.tcp;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.loop.IoLoop;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.EOFException;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A TCP connection owned by one {@link TcpLoop}.
 *
 * <p>Receive side (loop thread only): one pooled chunk; each readiness event reads as much as fits
 * and hands every complete frame to the handler in place. A frame longer than a chunk is completed
 * in a large buffer. Send side: a bounded ring of pooled buffers; producers on any thread append
 * whole frames under {@link #sendLock} (claim/commit), the loop writes everything committed with
 * one (gathering) write per iteration, outside the lock. One frame at a time may be committed
 * "held" ({@link #commitHeld}): the loop writes it only as far as its producer has released it and
 * writes nothing after it until it is complete. A frame claimed with {@link #claimInPlace} takes two
 * ring entries: its header in a pooled buffer, then its payload as a view of the caller's memory,
 * written from there by the same gathering write (no copy) until {@link #detachInPlace} copies
 * what is still unsent. A response claimed with {@link #claimFromReceived} is laid out the same way,
 * its payload a range of the large receive buffer whose frame is being dispatched: the ring holds
 * that buffer ({@link PooledBuffer#retain}) until the range is written. (Frames that fit a receive
 * chunk are copied: holding chunks and reading on in fresh ones measured slower at 16 to 64 KiB.)
 */
final class TcpConnection implements Connection, IoLoop.Flushable {
    private static final System.Logger LOG = System.getLogger(TcpConnection.class.getName());
    private static final int MAX_READS_PER_EVENT = 16;
    private static final int SEND_RING = 256;
    /** Payloads smaller than this are copied even when offered in place (two ring entries cost more). */
    static final int IN_PLACE_MIN = 16 * 1024;

    private final TcpLoop loop;
    private final SocketChannel channel;
    private final BufferPool pool;
    private final int maxFrameLength;
    private final long writeHighWaterMark;
    private final boolean serverSide;
    private final InetSocketAddress remote;
    private final InetSocketAddress local;
    private FrameHandler handler;
    private SelectionKey key;

    // ---- receive side, loop thread only
    private PooledBuffer readBuf;
    private long readPos;
    private long parsePos;
    private PooledBuffer largeBuf;
    private long largeFilled;
    private long largeLength;
    private boolean readEnabled = true;
    private boolean readPausedForWrites;

    // ---- send side, guarded by sendLock
    private final ReentrantLock sendLock = new ReentrantLock();
    private final PooledBuffer[] ring = new PooledBuffer[SEND_RING];
    private final long[] ringLimit = new long[SEND_RING];
    // an in-place payload's entry: ring[i] is null, ringInPlace[i] a view of the caller's memory
    private final ByteBuffer[] ringInPlace = new ByteBuffer[SEND_RING];
    private final long[] ringInPlaceToken = new long[SEND_RING];
    // the receive buffer an in-place payload lies in, released with the entry (claimFromReceived), or null,
    // and where in the view the payload starts (0 for a caller's payload)
    private final PooledBuffer[] ringInPlaceOwner = new PooledBuffer[SEND_RING];
    private final int[] ringBase = new int[SEND_RING];
    private int inPlaceEntries;
    private ByteBuffer claimInPlace;
    private long claimInPlaceToken;
    private PooledBuffer claimInPlaceOwner;
    private int claimInPlaceBase;
    private int claimInPlaceLength;
    // views of callers' in-place payloads, kept for the next call with the same segment; under sendLock.
    // One view may stand for several queued entries: a flush puts each view in its write once. Held
    // weakly, so that the cache never keeps a caller's memory (an automatic arena's) alive.
    private static final int VIEW_CACHE = 16;
    @SuppressWarnings("unchecked")
    private final WeakReference<MemorySegment>[] viewKeys = new WeakReference[VIEW_CACHE];
    @SuppressWarnings("unchecked")
    private final WeakReference<ByteBuffer>[] views = new WeakReference[VIEW_CACHE];
    // ---- the large receive buffer whose frame is being handed to the handler, loop thread only:
    // claimFromReceived may hold it
    private PooledBuffer dispatching;
    private int ringHead;
    private int ringCount;
    private long headFlushed;
    private long pending;
    private volatile long pendingVolatile;
    private volatile int ringFill; // ringCount, for writesBackedUp
    private boolean flushScheduled;
    private int claimIndex = -1;
    private long claimEnd;
    private boolean claimNewBuffer;
    private long claimStart;
    private boolean closed;
    private volatile boolean open = true;
    // the held frame (commitHeld), guarded by sendLock: its ring index (-1: none), bounds, progress
    private int heldIndex = -1;
    private long heldStart;
    private long heldReady;
    private long heldEnd;
    private long heldToken;
    private long heldSeq;
    private boolean heldAbandoned;
    private PooledBuffer heldOrphan;
    private boolean closing;

    // ---- flush scratch, loop thread only
    private final ByteBuffer[] iov = new ByteBuffer[SEND_RING];
    private boolean writeInterest;

    /**
     * @param serverSide true for an accepted connection: it stops reading requests while more than
     *                   {@code writeHighWaterMark} bytes of its responses wait to be written. A client
     *                   connection never stops reading responses (its own sends are bounded by the
     *                   caller, see {@link #claim(int, long)}), so two sides never wait for each other.
     */
    TcpConnection(TcpLoop loop, SocketChannel channel, int maxFrameLength, long writeHighWaterMark, boolean serverSide)
            throws IOException {
        this.loop = loop;
        this.serverSide = serverSide;
        this.channel = channel;
        this.pool = loop.transport().bufferPool();
        this.maxFrameLength = maxFrameLength;
        this.writeHighWaterMark = writeHighWaterMark;
        this.remote = (InetSocketAddress) channel.getRemoteAddress();
        this.local = (InetSocketAddress) channel.getLocalAddress();
    }

    /** Registers with the loop's selector; on the loop thread. */
    void register(FrameHandler frameHandler) throws IOException {
        this.handler = frameHandler;
        this.key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
        loop.added(this);
    }

    /** @return the socket (tests read its options) */
    SocketChannel channel() {
        return channel;
    }

    void setHandler(FrameHandler frameHandler) {
        this.handler = frameHandler;
    }

    // =========================================================== receive

    void onReady(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        int ops = k.readyOps();
        if ((ops & SelectionKey.OP_WRITE) != 0) {
            flush();
        }
        if ((ops & SelectionKey.OP_READ) != 0 && open) {
            read();
        }
    }

    private void read() {
        try {
            // writesBackedUp() is the live form of readPausedForWrites (set by flush, the only place pending falls)
            for (int i = 0; i < MAX_READS_PER_EVENT && open && readEnabled && !writesBackedUp(); i++) {
                if (largeBuf != null) {
                    if (!readLarge()) {
                        return;
                    }
                    continue;
                }
                if (readBuf == null) {
                    readBuf = pool.acquire();
                    if (readBuf == null) {
                        closeNow(new IOException("buffer pool exhausted: no receive buffer"));
                        return;
                    }
                    readPos = 0;
                    parsePos = 0;
                }
                ByteBuffer bb = readBuf.byteBuffer();
                int cap = readBuf.capacity();
                long space = cap - readPos;
                bb.limit(cap).position((int) readPos);
                int n = channel.read(bb);
                if (n < 0) {
                    closeNow(new EOFException("peer closed the connection"));
                    return;
                }
                if (n == 0) {
                    return;
                }
                readPos += n;
                parse();
                if (n < space) {
                    return; // drained the socket: the read did not fill the space offered
                }
            }
        } catch (IOException e) {
            closeNow(e);
        } catch (RuntimeException e) {
            // A handler bug must not re-dispatch the same bytes forever: drop this connection only.
            LOG.log(System.Logger.Level.ERROR, "frame handler failed; closing " + this, e);
            closeNow(e);
        }
    }

    /** Hands every complete frame in the read buffer to the handler, then compacts. */
    private void parse() {
        MemorySegment seg = readBuf.segment();
        int cap = readBuf.capacity();
        long need = FrameDescriptor.HEADER_LENGTH;
        while (true) {
            long avail = readPos - parsePos;
            long len = FrameDescriptor.check(seg, parsePos, avail, maxFrameLength);
            if (len == FrameDescriptor.INCOMPLETE_HEADER) {
                need = FrameDescriptor.HEADER_LENGTH;
                break;
            }
            if (len < 0) {
                protocolError(FrameDescriptor.describe(len));
                return;
            }
            if (len > avail) {
                if (len > cap) {
                    startLarge(seg, avail, len);
                    return;
                }
                need = len;
                break;
            }
            handler.onFrame(this, seg, parsePos, (int) len);
            parsePos += len;
            if (!open) {
                return;
            }
        }
        if (parsePos == readPos) {
            parsePos = 0;
            readPos = 0;
        } else if (cap - parsePos < need) {
            long rem = readPos - parsePos;
            MemorySegment.copy(seg, parsePos, seg, 0, rem);
            parsePos = 0;
            readPos = rem;
        }
    }

    private void startLarge(MemorySegment seg, long avail, long len) {
        largeBuf = pool.acquire((int) len);
        if (largeBuf == null) {
            closeNow(new IOException("buffer pool exhausted: no buffer for a frame of " + len + " bytes"));
            return;
        }
        MemorySegment.copy(seg, parsePos, largeBuf.segment(), 0, avail);
        largeFilled = avail;
        largeLength = len;
        parsePos = 0;
        readPos = 0;
    }

    /** @return true when the large frame completed (and reading may go on) */
    private boolean readLarge() throws IOException {
        ByteBuffer bb = largeBuf.byteBuffer();
        bb.limit((int) largeLength).position((int) largeFilled);
        int n = channel.read(bb);
        if (n < 0) {
            closeNow(new EOFException("peer closed the connection inside a frame"));
            return false;
        }
        largeFilled += n;
        if (largeFilled < largeLength) {
            return false;
        }
        PooledBuffer b = largeBuf;
        largeBuf = null;
        dispatching = b;
        try {
            handler.onFrame(this, b.segment(), 0, (int) largeLength);
        } finally {
            dispatching = null;
            b.release(); // responses sending from it hold it until they are written
        }
        return open;
    }

    /**
     * True on a server connection whose unwritten responses exceed the write high-water mark, or
     * fill half its send ring (many mid-size responses sent in place take two entries each): it
     * reads no more requests until they drain (checked before every read, so at most the responses
     * to one read's frames go over).
     */
    private boolean writesBackedUp() {
        return serverSide && (pendingVolatile > writeHighWaterMark || ringFill > SEND_RING / 2);
    }

    private void protocolError(String reason) {
        String msg = "protocol error from " + remote + ": " + reason;
        LOG.log(System.Logger.Level.WARNING, "closing connection: " + msg);
        closeNow(new ProtocolException(msg));
    }

    // =========================================================== send

    @Override
    public long claim(int frameLength) {
        return claim(frameLength, Long.MAX_VALUE);
    }

    @Override
    public long claim(int frameLength, long unsentLimit) {
        return claim(frameLength, unsentLimit, 0);
    }

    /**
     * Payloads of at least {@link #IN_PLACE_MIN} bytes in native memory go in place; others answer
     * {@link #UNSUPPORTED}. The {@link ByteBuffer} view of {@code tail} is cached per segment: a
     * caller that sends from the same segments again allocates nothing.
     */
    @Override
    public long claimInPlace(int frameLength, MemorySegment tail, long unsentLimit, long token) {
        long tailLength = tail.byteSize();
        if (tailLength < IN_PLACE_MIN || tailLength > frameLength - FrameDescriptor.HEADER_LENGTH || !tail.isNative()) {
            return UNSUPPORTED;
        }
        long off = claim(frameLength - (int) tailLength, unsentLimit, 1);
        if (off >= 0) {
            int i = (int) (tail.address() >>> 12 ^ tail.address() >>> 20) & (VIEW_CACHE - 1);
            MemorySegment k = viewKeys[i] == null ? null : viewKeys[i].get();
            ByteBuffer view = k == null ? null : views[i].get();
            if (view == null || k.address() != tail.address() || k.byteSize() != tailLength
                    || !k.scope().equals(tail.scope()) || k.isReadOnly() != tail.isReadOnly()) {
                view = tail.asByteBuffer();
                viewKeys[i] = new WeakReference<>(tail);
                views[i] = new WeakReference<>(view);
            }
            claimInPlace = view;
            claimInPlaceBase = 0;
            claimInPlaceLength = (int) tailLength;
            claimInPlaceToken = token;
        }
        return off;
    }

    /**
     * Holds the large receive buffer being dispatched (on the I/O thread, inside the handler's
     * {@code onFrame}) when the payload lies in it and is at least {@link #IN_PLACE_MIN} bytes;
     * otherwise {@link #UNSUPPORTED}. The ring entry uses the buffer's own view, with the payload's
     * offset as its base: nothing is allocated.
     */
    @Override
    public long claimFromReceived(int frameLength, MemorySegment src, long offset, int length) {
        if (!loop.inLoop()) {
            return UNSUPPORTED;
        }
        PooledBuffer b = dispatching;
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
     *                     when the ring lacks them the answer is {@link #UNSUPPORTED}, not back-pressure
     */
    private long claim(int frameLength, long unsentLimit, int extraEntries) {
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
        if (extraEntries > 0 && ringCount + 1 + extraEntries > SEND_RING) {
            sendLock.unlock();
            return UNSUPPORTED; // too few ring entries to send in place: the caller copies into a plain claim
        }
        if (ringCount > 0) {
            int t = (ringHead + ringCount - 1) & (SEND_RING - 1);
            PooledBuffer b = ring[t];
            long limit = ringLimit[t];
            if (b != null && !b.isLarge() && b.capacity() - limit >= frameLength) {
                claimIndex = t;
                claimStart = limit;
                claimEnd = limit + frameLength;
                claimNewBuffer = false;
                return limit;
            }
        }
        if (ringCount == SEND_RING) {
            sendLock.unlock();
            return BACK_PRESSURED;
        }
        PooledBuffer b = pool.acquire(frameLength);
        if (b == null) {
            sendLock.unlock();
            return NO_BUFFER;
        }
        int t = (ringHead + ringCount) & (SEND_RING - 1);
        ring[t] = b;
        ringLimit[t] = 0;
        ringCount++;
        claimIndex = t;
        claimStart = 0;
        claimEnd = frameLength;
        claimNewBuffer = true;
        return 0;
    }

    @Override
    public MemorySegment claimBuffer() {
        return ring[claimIndex].segment();
    }

    @Override
    public void commit() {
        int t = claimIndex;
        long added = claimEnd - ringLimit[t];
        ringLimit[t] = claimEnd;
        claimIndex = -1;
        if (claimInPlace != null) {
            int x = (t + 1) & (SEND_RING - 1); // the claim was the ring's last entry; its payload follows
            ring[x] = null;
            ringInPlace[x] = claimInPlace;
            ringInPlaceToken[x] = claimInPlaceToken;
            ringInPlaceOwner[x] = claimInPlaceOwner;
            ringLimit[x] = claimInPlaceLength;
            ringBase[x] = claimInPlaceBase;
            added += claimInPlaceLength;
            ringCount++;
            inPlaceEntries++;
            claimInPlace = null;
            claimInPlaceOwner = null;
        }
        pending += added;
        pendingVolatile = pending;
        ringFill = ringCount;
        boolean schedule = !flushScheduled;
        flushScheduled = true;
        sendLock.unlock();
        if (schedule) {
            loop.flushLater(this);
        }
    }

    @Override
    public void abort() {
        int t = claimIndex;
        claimIndex = -1;
        if (claimInPlaceOwner != null) {
            claimInPlaceOwner.release(); // the hold claimFromReceived took
            claimInPlaceOwner = null;
        }
        claimInPlace = null;
        if (claimNewBuffer && ringLimit[t] == 0 && ringCount > 0
                && t == ((ringHead + ringCount - 1) & (SEND_RING - 1))) {
            PooledBuffer b = ring[t];
            ring[t] = null;
            ringCount--;
            b.release();
        }
        sendLock.unlock();
    }

    @Override
    public long commitHeld(int readyLength) {
        if (heldIndex >= 0 || loop.inLoop() || claimInPlace != null) {
            return -1; // one held frame at a time; the claim stays open for a plain commit
        }
        if (readyLength < 0 || claimStart + readyLength > claimEnd) {
            abort();
            throw new IllegalArgumentException("ready length " + readyLength + " outside the claimed frame");
        }
        heldIndex = claimIndex;
        heldStart = claimStart;
        heldReady = claimStart + readyLength;
        heldEnd = claimEnd;
        long token = ++heldSeq;
        heldToken = token;
        commit();
        return token;
    }

    @Override
    public void releaseHeld(long token, int readyLength) {
        PooledBuffer orphan = null;
        boolean schedule = false;
        sendLock.lock();
        try {
            if (token != heldToken || token == 0) {
                return;
            }
            long ready = heldStart + readyLength;
            if (ready >= heldEnd) {
                heldIndex = -1;
                heldToken = 0;
                orphan = heldOrphan; // the connection closed meanwhile: the buffer is free only now
                heldOrphan = null;
            } else if (ready > heldReady) {
                heldReady = ready;
            }
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
            loop.flushLater(this);
        }
    }

    @Override
    public void abandonHeld(long token, Throwable cause) {
        PooledBuffer orphan = null;
        sendLock.lock();
        try {
            if (token == heldToken && token != 0) {
                heldToken = 0;
                if (closed) {
                    orphan = heldOrphan;
                    heldOrphan = null;
                    heldIndex = -1;
                } else {
                    heldAbandoned = true; // flush still stops at the ready bytes; closeNow frees the buffer
                }
            }
        } finally {
            sendLock.unlock();
        }
        if (orphan != null) {
            orphan.release();
        }
        close(cause);
    }

    /** Writes everything committed; on the loop thread. */
    @Override
    public void flush() {
        int n;
        long total = 0;
        boolean cutShort = false;
        sendLock.lock();
        try {
            flushScheduled = false;
            if (closed || ringCount == 0 || pending == 0) {
                return;
            }
            n = ringCount;
            for (int i = 0; i < n; i++) {
                int idx = (ringHead + i) & (SEND_RING - 1);
                PooledBuffer pb = ring[idx];
                ByteBuffer bb = pb != null ? pb.byteBuffer() : ringInPlace[idx];
                if (pb == null && i > 0 && alreadyIn(bb, i)) {
                    n = i; // one view stands for two queued payloads: the second goes in the next write
                    cutShort = true;
                    break;
                }
                int base = pb == null ? ringBase[idx] : 0; // where an in-place range starts in its view
                int start = base + (i == 0 ? (int) headFlushed : 0);
                int end = base + (int) ringLimit[idx];
                boolean held = idx == heldIndex;
                if (held) {
                    end = (int) Math.min(end, heldReady); // nothing past the held frame's ready bytes
                }
                bb.limit(end);
                bb.position(start);
                total += end - start;
                iov[i] = bb;
                if (held) {
                    n = i + 1;
                    break;
                }
            }
        } finally {
            sendLock.unlock();
        }
        long written;
        try {
            written = n == 1 ? channel.write(iov[0]) : channel.write(iov, 0, n);
        } catch (IOException e) {
            for (int i = 0; i < n; i++) {
                iov[i] = null;
            }
            closeNow(e);
            return;
        }
        boolean socketFull = written < total;
        if (cutShort && !socketFull) {
            sendLock.lock();
            try {
                if (!flushScheduled) {
                    flushScheduled = true;
                    loop.flushLater(this);
                }
            } finally {
                sendLock.unlock();
            }
        }
        sendLock.lock();
        try {
            if (closed) {
                return;
            }
            pending -= written;
            pendingVolatile = pending;
            for (int i = 0; i < n; i++) {
                ByteBuffer bb = iov[i];
                int idx = ringHead;
                int base = ring[idx] == null ? ringBase[idx] : 0;
                if (bb.hasRemaining() || bb.limit() < base + ringLimit[idx]) {
                    headFlushed = bb.position() - base;
                    break;
                }
                // This buffer is fully written. (No claim is open: we hold the send lock.)
                if (ringCount == 1) {
                    PooledBuffer b = ring[idx];
                    if (b == null) {
                        dropInPlace(idx);
                        ringCount = 0;
                    } else if (b.isLarge()) {
                        ring[idx] = null;
                        ringCount = 0;
                        b.release();
                    } else {
                        ringLimit[idx] = 0; // keep the last chunk for the next frames
                    }
                    headFlushed = 0;
                    break;
                }
                PooledBuffer b = ring[idx];
                ring[idx] = null;
                ringHead = (ringHead + 1) & (SEND_RING - 1);
                ringCount--;
                headFlushed = 0;
                if (b == null) {
                    dropInPlace(idx);
                } else {
                    b.release();
                }
            }
            ringFill = ringCount;
        } finally {
            java.util.Arrays.fill(iov, 0, n, null); // keep no caller's memory reachable from here
            sendLock.unlock();
        }
        updateWriteInterest(socketFull);
        if (written > 0) {
            handler.onSendProgress(this);
        }
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

    /** Forgets the in-place payload at ring entry {@code idx}; under the send lock. */
    private void dropInPlace(int idx) {
        ringInPlace[idx] = null;
        inPlaceEntries--;
        PooledBuffer owner = ringInPlaceOwner[idx];
        if (owner != null) {
            ringInPlaceOwner[idx] = null;
            owner.release();
        }
    }

    /**
     * Copies the unsent rest of the in-place payload of {@code token} into a pooled buffer, so that
     * its memory is no longer read; on the I/O thread (where the writes happen, so none is under way).
     * When no buffer is free the connection closes, which forgets the payload too.
     */
    @Override
    public void detachInPlace(long token) {
        boolean exhausted = false;
        long rest = 0;
        sendLock.lock();
        try {
            for (int i = 0; i < ringCount && inPlaceEntries > 0; i++) {
                int idx = (ringHead + i) & (SEND_RING - 1);
                if (ringInPlace[idx] == null || ringInPlaceOwner[idx] != null || ringInPlaceToken[idx] != token) {
                    continue;
                }
                long start = i == 0 ? headFlushed : 0;
                rest = ringLimit[idx] - start;
                PooledBuffer copy = pool.acquire((int) rest);
                if (copy == null) {
                    exhausted = true;
                    break;
                }
                // the caller's whole payload (ofBuffer covers position..limit, which flush moves); rare, may allocate
                MemorySegment payload = MemorySegment.ofBuffer(ringInPlace[idx].duplicate().clear());
                MemorySegment.copy(payload, start, copy.segment(), 0, rest);
                dropInPlace(idx);
                ring[idx] = copy;
                ringLimit[idx] = rest;
                if (i == 0) {
                    headFlushed = 0;
                }
                break;
            }
        } finally {
            sendLock.unlock();
        }
        if (exhausted) {
            closeNow(new IOException("buffer pool exhausted: no buffer for the unsent " + rest
                    + " bytes of an in-place payload whose call ended"));
        }
    }

    private void updateWriteInterest(boolean socketFull) {
        // The socket took less than offered: wait for OP_WRITE. Frames committed meanwhile were
        // scheduled for another flush by their committer.
        if (socketFull != writeInterest && key != null && key.isValid()) {
            writeInterest = socketFull;
            updateOps();
        }
        boolean over = writesBackedUp();
        if (over != readPausedForWrites) {
            readPausedForWrites = over;
            updateOps();
            if (!over && open && readEnabled) {
                loop.executeLater(this::resumeRead);
            }
        }
    }

    private void resumeRead() {
        if (open && key != null && key.isValid()) {
            read();
        }
    }

    private void updateOps() {
        if (key == null || !key.isValid()) {
            return;
        }
        int ops = 0;
        if (readEnabled && !readPausedForWrites) {
            ops |= SelectionKey.OP_READ;
        }
        if (writeInterest) {
            ops |= SelectionKey.OP_WRITE;
        }
        key.interestOps(ops);
    }

    // =========================================================== lifecycle and the rest

    void tick(long now) {
        if (open) {
            handler.onTick(this, now);
        }
    }

    @Override
    public void setReadEnabled(boolean enabled) {
        execute(() -> {
            if (readEnabled != enabled) {
                readEnabled = enabled;
                updateOps();
                if (enabled && open) {
                    loop.executeLater(this::resumeRead);
                }
            }
        });
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean inEventLoop() {
        return loop.inLoop();
    }

    @Override
    public long tickIntervalNanos() {
        return loop.tickIntervalNanos();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public long pendingBytes() {
        return pendingVolatile;
    }

    @Override
    public void close(Throwable cause) {
        if (loop.inLoop()) {
            closeNow(cause);
        } else {
            loop.execute(() -> closeNow(cause));
        }
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /** Closes on the loop thread: releases every buffer, tells the handler once. */
    void closeNow(Throwable cause) {
        if (!open || closing) {
            return;
        }
        closing = true;
        if (cause == null) {
            flush(); // orderly: send what is committed, as far as the socket takes it now
        }
        open = false;
        sendLock.lock();
        try {
            closed = true;
            for (int i = 0; i < ringCount; i++) {
                int idx = (ringHead + i) & (SEND_RING - 1);
                if (ring[idx] == null) {
                    dropInPlace(idx);
                } else if (idx == heldIndex && !heldAbandoned) {
                    heldOrphan = ring[idx]; // its producer still writes into it; releaseHeld frees it
                } else {
                    ring[idx].release();
                }
                ring[idx] = null;
            }
            ringCount = 0;
            pending = 0;
            pendingVolatile = 0;
            ringFill = 0;
        } finally {
            sendLock.unlock();
        }
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing channel failed", e);
        }
        if (readBuf != null) {
            readBuf.release();
            readBuf = null;
        }
        if (largeBuf != null) {
            largeBuf.release();
            largeBuf = null;
        }
        loop.removed(this);
        if (handler != null) {
            try {
                handler.onClose(this, cause instanceof ClosedChannelException ? new EOFException("channel closed") : cause);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "connection close handler failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "TcpConnection[" + local + " -> " + remote + (open ? "" : ", closed") + "]";
    }
}
