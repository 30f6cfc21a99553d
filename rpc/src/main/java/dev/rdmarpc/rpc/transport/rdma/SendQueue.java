package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.buffer.BufferPool;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.transport.Connection;
import java.lang.foreign.MemorySegment;

/**
 * The send side of one connection without the device: frames committed by producers, cut into
 * messages the size of the peer's receive buffers, and the window of messages in flight.
 *
 * <p>Frames are encoded in place (claim, commit) into pooled chunks that are already registered.
 * While a chunk waits for the window (or for credits), later small frames are appended to it, so a
 * full window turns a burst of small frames into few large messages (coalescing). A frame larger
 * than one message gets a buffer of its own and leaves as several messages pointing into it: no
 * copy on the sending side. Each message in flight holds one window slot until its completion; the
 * slot of a buffer's last message releases the buffer.
 *
 * <p>A frame of at least the rendezvous threshold ({@link #rendezvous(int)}) is not cut into messages: it
 * is taken whole ({@link #takeRendezvous}) and leaves as one small descriptor that the peer reads it by;
 * its buffer then belongs to the {@link Rendezvous} until the peer says it is done.
 *
 * <p>Like the TCP transport's send ring, it refuses a claim ({@link Connection#BACK_PRESSURED}) only
 * when {@value #ENTRIES} entries are queued; the byte bound is the connection's: it stops reading
 * while too much is queued, which stops the peer through its credits.
 *
 * <p>Not thread-safe: the connection calls everything under its send lock.
 */
final class SendQueue {
    /** Most committed messages-to-be queued behind the window. */
    static final int ENTRIES = 256;
    private static final int MASK = ENTRIES - 1;

    private final BufferPool pool;
    private int maxMessage;

    // entries: committed, not yet wholly handed to the device, FIFO
    private final PooledBuffer[] entryBuffer = new PooledBuffer[ENTRIES];
    private final int[] entryLength = new int[ENTRIES];
    private final int[] entrySent = new int[ENTRIES];
    private final boolean[] entrySealed = new boolean[ENTRIES];
    private final int[] entryFrames = new int[ENTRIES];
    private final int[] entryHeadLength = new int[ENTRIES];
    private final long[] entryTailAddress = new long[ENTRIES];
    private final int[] entryTailLkey = new int[ENTRIES];
    /** The registration a tail lies in: the entry holds one of its uses until it is released. */
    private final DeviceTable.UserRegion[] entryTailRegion = new DeviceTable.UserRegion[ENTRIES];
    private final boolean[] entryRendezvous = new boolean[ENTRIES];
    private int head;
    private int count;

    // window slots: messages in flight
    private final SendWindow window;

    private long pendingBytes;
    private boolean closed;
    /** Frames of at least this length are rendezvous frames; 0 for none. */
    private int rendezvousMin;

    // the open claim
    private int claimEntry = -1;
    private int claimOffset;
    private int claimLength;
    private int claimTail;
    private boolean claimNew;

    // the last message taken
    private PooledBuffer takenBuffer;
    private int takenOffset;
    private int takenLength;
    private int takenHeadLength;
    private long takenTailAddress;
    private int takenTailLkey;
    private DeviceTable.UserRegion takenTailRegion;

    /**
     * @param pool          where buffers come from
     * @param window        messages in flight at most
     * @param maxMessage    the largest message (the peer's receive buffer size, at most the chunk size)
     */
    SendQueue(BufferPool pool, int window, int maxMessage) {
        if (window < 1 || maxMessage < 1 || maxMessage > pool.chunkSize()) {
            throw new IllegalArgumentException("window " + window + ", maxMessage " + maxMessage + ", chunk " + pool.chunkSize());
        }
        this.pool = pool;
        this.maxMessage = maxMessage;
        this.window = new SendWindow(window);
    }

    /**
     * Frames of at least {@code minBytes} go by rendezvous from now on.
     *
     * @param minBytes the threshold, 0 for none
     */
    void rendezvous(int minBytes) {
        this.rendezvousMin = minBytes;
    }

    private boolean isRendezvous(int frameLength) {
        return rendezvousMin > 0 && frameLength >= rendezvousMin;
    }

    /**
     * The buffer of a rendezvous frame's first {@code length} bytes: room for the descriptor after them,
     * and always a large buffer, a registration of its own (never a chunk of a shared slab), so that
     * what the peer could reach beside the frame is at most the rest of that buffer.
     */
    private PooledBuffer acquireRendezvous(int length) {
        return pool.acquire(Math.max(length + Rendezvous.MAX_DESCRIPTOR, pool.chunkSize() + 1));
    }

    /**
     * Reserves room for one frame; see {@link Connection#claim}.
     *
     * @return the offset in {@link #claimBuffer()}, or {@link Connection#CLOSED},
     *         {@link Connection#NO_BUFFER}, {@link Connection#BACK_PRESSURED}
     */
    long claim(int frameLength) {
        if (claimEntry >= 0) {
            throw new IllegalStateException("a claim is already open");
        }
        if (closed) {
            return Connection.CLOSED;
        }
        boolean rendezvous = isRendezvous(frameLength);
        if (frameLength <= maxMessage && count > 0 && !rendezvous) {
            int t = (head + count - 1) & MASK;
            if (!entrySealed[t] && entryLength[t] + frameLength <= maxMessage) {
                claimEntry = t;
                claimOffset = entryLength[t];
                claimLength = frameLength;
                claimTail = 0;
                claimNew = false;
                return claimOffset;
            }
        }
        if (count == ENTRIES) {
            return Connection.BACK_PRESSURED;
        }
        PooledBuffer b = rendezvous ? acquireRendezvous(frameLength)
                : frameLength <= pool.chunkSize() ? pool.acquire() : pool.acquire(frameLength);
        if (b == null) {
            return Connection.NO_BUFFER;
        }
        newEntry(b, frameLength > maxMessage || rendezvous, 0, 0, null);
        entryRendezvous[claimEntry] = rendezvous;
        claimLength = frameLength;
        return 0;
    }

    private void newEntry(PooledBuffer b, boolean sealed, long tailAddress, int tailLkey, DeviceTable.UserRegion region) {
        int t = (head + count) & MASK;
        entryBuffer[t] = b;
        entryLength[t] = 0;
        entrySent[t] = 0;
        entryFrames[t] = 0;
        entrySealed[t] = sealed;
        entryTailAddress[t] = tailAddress;
        entryTailLkey[t] = tailLkey;
        entryTailRegion[t] = region;
        count++;
        claimEntry = t;
        claimOffset = 0;
        claimTail = 0;
        claimNew = true;
    }

    /**
     * Reserves room for a frame whose last {@code tailLength} bytes are not copied but sent from
     * registered memory the caller owns (zero-copy): the claim holds the first
     * {@code frameLength - tailLength} bytes only. The frame is never coalesced with others.
     *
     * @param tailAddress where the tail starts (registered: {@code tailLkey} on this device)
     * @param region      the registration the tail lies in, with a use taken for this frame: a successful
     *                    claim holds it (and gives it back when the frame is released), a refused one
     *                    leaves it to the caller
     * @return as {@link #claim(int)}
     */
    long claimWithTail(int frameLength, long tailAddress, int tailLength, int tailLkey, DeviceTable.UserRegion region) {
        if (claimEntry >= 0) {
            throw new IllegalStateException("a claim is already open");
        }
        if (tailLength < 1 || tailLength > frameLength - FrameDescriptor.HEADER_LENGTH) {
            throw new IllegalArgumentException("tail of " + tailLength + " bytes in a frame of " + frameLength);
        }
        if (closed) {
            return Connection.CLOSED;
        }
        if (count == ENTRIES) {
            return Connection.BACK_PRESSURED;
        }
        int headLength = frameLength - tailLength;
        PooledBuffer b = isRendezvous(frameLength) ? acquireRendezvous(headLength)
                : headLength <= pool.chunkSize() ? pool.acquire() : pool.acquire(headLength);
        if (b == null) {
            return Connection.NO_BUFFER;
        }
        newEntry(b, true, tailAddress, tailLkey, region);
        entryRendezvous[claimEntry] = isRendezvous(frameLength);
        claimLength = headLength;
        claimTail = tailLength;
        return 0;
    }


    /** @return the memory of the open claim */
    MemorySegment claimBuffer() {
        return entryBuffer[claimEntry].segment();
    }

    /** Publishes the open claim. */
    void commit() {
        int t = claimEntry;
        entryHeadLength[t] = claimOffset + claimLength;
        entryLength[t] = claimOffset + claimLength + claimTail;
        entryFrames[t]++;
        pendingBytes += claimLength + claimTail;
        claimEntry = -1;
    }

    /** Drops the open claim; a buffer taken for it alone goes back to the pool. */
    void abort() {
        int t = claimEntry;
        claimEntry = -1;
        if (claimNew) {
            PooledBuffer b = entryBuffer[t];
            entryBuffer[t] = null;
            entryRendezvous[t] = false;
            count--;
            b.release();
            unuse(t);
        }
    }

    /** @return the entries taken (queued or in flight), at most {@value #ENTRIES} */
    int entries() {
        return count;
    }

    /** @return true when committed bytes wait for the window or for credits */
    boolean hasQueued() {
        return count > 0;
    }

    /** @return true when a message could be taken if credits allow (queued bytes and a free slot) */
    boolean canTake() {
        return count > 0 && !window.full();
    }

    /** @return true when every window slot is in flight */
    boolean windowFull() {
        return window.full();
    }

    /** @return messages in flight */
    int inFlight() {
        return window.inFlight();
    }

    /** @return true when the next message to take is a rendezvous frame ({@link #takeRendezvous}) */
    boolean headIsRendezvous() {
        return count > 0 && entryRendezvous[head];
    }

    /**
     * Takes the oldest entry, a rendezvous frame, whole, in a free window slot whose completion (the
     * descriptor's) releases nothing: {@link #takenBuffer()} now belongs to the caller, which releases it
     * once the peer has read it. The frame's bytes count as pending until that slot completes.
     *
     * @return the window slot, or -1 when the window is full
     * @throws IllegalStateException when the oldest entry is not a rendezvous frame
     */
    int takeRendezvous() {
        if (!headIsRendezvous()) {
            throw new IllegalStateException("the oldest entry is not a rendezvous frame");
        }
        if (window.full()) {
            return -1;
        }
        int h = head;
        takenBuffer = entryBuffer[h];
        takenOffset = 0;
        takenLength = entryLength[h];
        takenHeadLength = entryHeadLength[h];
        takenTailAddress = entryTailAddress[h];
        takenTailLkey = entryTailLkey[h];
        takenTailRegion = entryTailRegion[h];
        entryTailRegion[h] = null;
        entryBuffer[h] = null;
        entryRendezvous[h] = false;
        head = (h + 1) & MASK;
        count--;
        return window.take(takenLength, null, null);
    }

    /**
     * Takes a window slot for an empty message (one that only carries immediate data).
     *
     * @return the slot, or -1 when the window is full
     */
    int takeEmpty() {
        return window.full() ? -1 : window.take(0, null, null);
    }

    /**
     * Takes the next message: up to {@code maxMessage} bytes of the oldest entry, in a free window
     * slot. Its memory is then described by {@link #takenBuffer()}, {@link #takenOffset()},
     * {@link #takenLength()}.
     *
     * <p>Slots are handed out in ring order, so the slots of one batch are consecutive except where
     * the ring wraps to 0.
     *
     * @return the window slot (the work request id's low bits), or -1 when nothing is queued or the
     *         window is full
     */
    int take() {
        if (count == 0 || window.full()) {
            return -1;
        }
        int h = head;
        int sent = entrySent[h];
        int len = Math.min(maxMessage, entryLength[h] - sent);
        takenBuffer = entryBuffer[h];
        takenOffset = sent;
        takenLength = len;
        int headLength = entryHeadLength[h];
        takenHeadLength = Math.max(0, Math.min(headLength, sent + len) - sent);
        takenTailAddress = entryTailAddress[h] + Math.max(0, sent - headLength);
        takenTailLkey = entryTailLkey[h];
        entrySent[h] += len;
        entrySealed[h] = true;
        if (entrySent[h] != entryLength[h]) {
            return window.take(len, null, null);
        }
        PooledBuffer last = entryBuffer[h]; // the entry's last message: its completion releases the buffer
        DeviceTable.UserRegion region = entryTailRegion[h];
        entryBuffer[h] = null;
        entryTailRegion[h] = null;
        head = (h + 1) & MASK;
        count--;
        return window.take(len, last, region);
    }

    /** @return the buffer of the last message taken */
    PooledBuffer takenBuffer() {
        return takenBuffer;
    }

    /** @return where the last message taken starts in its buffer */
    int takenOffset() {
        return takenOffset;
    }

    /** @return the length of the last message taken */
    int takenLength() {
        return takenLength;
    }

    /** @return how much of the last message taken lies in {@link #takenBuffer()} from {@link #takenOffset()} */
    int takenHeadLength() {
        return takenHeadLength;
    }

    /** @return the rest of the last message taken: bytes from {@link #takenTailAddress()} (zero-copy tail) */
    int takenTailLength() {
        return takenLength - takenHeadLength;
    }

    /** @return where the tail part of the last message taken starts */
    long takenTailAddress() {
        return takenTailAddress;
    }

    /** @return the local key of the tail part */
    int takenTailLkey() {
        return takenTailLkey;
    }

    /**
     * @return the registration the tail of the rendezvous frame just taken lies in, or null: its use
     *         now belongs to the caller, with the frame's buffer
     */
    DeviceTable.UserRegion takenTailRegion() {
        return takenTailRegion;
    }

    /** @return true when an entry or a message in flight holds a use of {@code u} */
    boolean holds(DeviceTable.UserRegion u) {
        for (DeviceTable.UserRegion r : entryTailRegion) {
            if (r == u) {
                return true;
            }
        }
        return window.holds(u);
    }

    /** Gives back the registration use entry {@code t} holds, if any. */
    private void unuse(int t) {
        DeviceTable.UserRegion r = entryTailRegion[t];
        if (r != null) {
            entryTailRegion[t] = null;
            r.unuse();
        }
    }

    /**
     * The oldest message in flight completed (or was flushed): frees its slot and, after a buffer's
     * last message, the buffer.
     *
     * @param slot the slot the completion names: must be the oldest in flight (RC completes in order)
     * @throws IllegalStateException when it is not
     */
    void completed(int slot) {
        pendingBytes -= window.completed(slot);
    }

    /** @return bytes committed and not yet completed */
    long pendingBytes() {
        return pendingBytes;
    }

    /**
     * Refuses further claims and releases the queued buffers the device has not seen. A buffer partly
     * in flight (a large frame's earlier messages) and the buffers of messages in flight stay until
     * {@link #completed} or {@link #releaseInFlight}.
     */
    void close() {
        closed = true;
        int keep = count > 0 && entrySent[head] > 0 ? 1 : 0;
        while (count > keep) {
            int t = (head + count - 1) & MASK;
            PooledBuffer b = entryBuffer[t];
            entryBuffer[t] = null;
            count--;
            if (b != null) {
                b.release();
            }
            unuse(t);
        }
    }

    /** Releases every buffer still held: only once the device can no longer read them (QP destroyed). */
    void releaseInFlight() {
        while (count > 0) {
            PooledBuffer b = entryBuffer[head];
            entryBuffer[head] = null;
            unuse(head);
            head = (head + 1) & MASK;
            count--;
            if (b != null) {
                b.release();
            }
        }
        window.releaseAll();
        pendingBytes = 0;
    }

    /** @return true once {@link #close()} ran */
    boolean isClosed() {
        return closed;
    }
}
