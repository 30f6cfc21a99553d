package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.MemoryWindow;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Rendezvous frames: a frame of at least {@link SendSettings#rendezvousThreshold} bytes is not sent
 * but read by its receiver, straight into the buffer its handler gets.
 *
 * <ol>
 * <li>The sender binds a type-2 memory window to each part of the frame's memory (the pooled buffer
 *     it was encoded in, and a zero-copy tail in the application's registered memory, if any), with
 *     remote read access to exactly that range and a key of its own, then sends a descriptor in a data
 *     message flagged {@link Credits#RENDEZVOUS}.</li>
 * <li>The receiver takes a buffer of the frame's length, RDMA READs the parts into it, hands the frame
 *     to its handler as any other, and reports the transfer done in the immediate data of its next
 *     data message ({@link Credits#DONE_MASK}; an empty data message when nothing else leaves).</li>
 * <li>The sender invalidates the windows (LOCAL_INV) and releases the memory once the invalidation
 *     has completed: no key outlives its transfer, and none covers anything but its frame.</li>
 * </ol>
 *
 * <p><b>Keys by registration instead of windows.</b> On a device that executes binds again after a
 * retransmission ({@link DeviceTable.Device#bindsRepeatedByRetransmission}, Soft-RoCE) a window may be
 * bound only while nothing else of the connection is outstanding: then there is nothing to retransmit
 * ahead of the bind. A frame that finds the connection idle there (no work request outstanding, no
 * other rendezvous frame held: rxe fences an invalidation behind everything before it) gets windows;
 * one that finds it busy (and any frame with a part in the application's memory, whose registration a
 * window's key would reach whole on rxe) has each part registered on its own instead ({@code ibv_reg_mr} on exactly the
 * part's bytes, remote read only): the key is the region's, it covers the part alone (a region's
 * bounds are exact on every device, rxe's too, where a window's are its region's), and the region is
 * deregistered once the peer reports the frame done (at the sender's next flush), which revokes the
 * key before the frame is released. The same guarantee, no work request on the send queue, at the
 * cost of a registration and a deregistration per part (system calls; {@code RegistrationCostTest}
 * times them). Frames are released in the order they were sent, whichever way their keys go.
 *
 * <p>Frames are handed to the handler in order: while a read is in flight, later messages of the
 * connection wait, as they do behind a frame being reassembled. A sender has at most {@link #SLOTS}
 * rendezvous frames not yet done; a descriptor beyond that is a protocol error.
 *
 * <p>The descriptor (little-endian, like the frame header):
 * <pre>
 *  0  frame length (u32)
 *  4  parts (u32, 1 or 2)
 *  8  the frame's header, as in the frame ({@link FrameDescriptor#HEADER_LENGTH} bytes)
 * 40  part 0: address (u64), key (u32), length (u32)
 * 56  part 1: address (u64), key (u32), length (u32)     (when there are two)
 * </pre>
 * The header copy lets the receiver choose where the frame's attachment goes before it reads anything
 * ({@link dev.rdmarpc.rpc.transport.FrameHandler#attachmentSink}): a client's response attachment is
 * read straight into the buffer its caller gave.
 *
 * <p>This class holds the descriptor's codec and the sending side's windows and frames; not
 * thread-safe (the sender uses it under its send lock).
 */
final class Rendezvous {
    /** Rendezvous frames a connection may have sent and not yet heard are done. */
    static final int SLOTS = 4;
    /** Parts of one frame: its pooled buffer and a zero-copy tail. */
    static final int MAX_PARTS = 2;
    /** Longest descriptor. */
    static final int MAX_DESCRIPTOR = descriptorLength(MAX_PARTS);
    /** Where the copy of the frame's header starts in a descriptor. */
    static final int HEADER_OFFSET = 8;
    /** Where the parts start in a descriptor. */
    private static final int PARTS_OFFSET = HEADER_OFFSET + FrameDescriptor.HEADER_LENGTH;
    /** Send work requests a connection needs for rendezvous: binds and invalidations, and its reads. */
    static final int WORK_REQUESTS = 2 * SLOTS * MAX_PARTS + MAX_PARTS;
    /** Reads of one frame in flight at once (the queue pair's initiator depth). */
    static final int READS = MAX_PARTS;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final ProtectionDomain pd;
    /** Windows are bound only while the connection is idle; other frames' parts get regions ({@link #registerWhenBusy()}). */
    private final boolean registerWhenBusy;
    private final MemoryWindow[] windows = new MemoryWindow[SLOTS * MAX_PARTS];
    /** The parts' own regions while a frame registered part by part holds them. */
    private final MemoryRegion[] regions = new MemoryRegion[SLOTS * MAX_PARTS];
    /** Whether a slot's parts were registered on their own (else bound to windows). */
    private final boolean[] registered = new boolean[SLOTS];
    /** Each window's key, as last bound (the next binding's key follows from it). */
    private final int[] keys = new int[SLOTS * MAX_PARTS];
    private final PooledBuffer[] frames = new PooledBuffer[SLOTS];
    /** The registration a slot's frame's second part lies in (a use held until the frame is released), or null. */
    private final DeviceTable.UserRegion[] tailRegions = new DeviceTable.UserRegion[SLOTS];
    private final int[] parts = new int[SLOTS];
    /** Parts of a done slot whose key is not revoked yet (window invalidated, or region deregistered). */
    private final int[] invalidationsLeft = new int[SLOTS];
    /** The oldest slot in use (invalidating, or waiting to be done). */
    private int oldest;
    /** Slots done whose keys are being revoked, or were and wait for an older one, from {@link #oldest}. */
    private int invalidating;
    /** Slots sent and not yet done, after those. */
    private int awaitingDone;
    private boolean closed;

    /**
     * Allocates the connection's windows.
     *
     * @param registerWhenBusy bind windows only while the connection is idle, and give the parts of
     *                         other frames regions of their own (a device that repeats binds)
     * @throws RuntimeException as the device refuses a window (those allocated are closed)
     */
    Rendezvous(ProtectionDomain pd, boolean registerWhenBusy) {
        this.pd = pd;
        this.registerWhenBusy = registerWhenBusy;
        try {
            for (int i = 0; i < windows.length; i++) {
                windows[i] = pd.allocateMemoryWindow();
                keys[i] = windows[i].rkey();
            }
        } catch (RuntimeException e) {
            closeKeys();
            throw e;
        }
    }

    /** @return the length of a descriptor of {@code parts} parts */
    static int descriptorLength(int parts) {
        return PARTS_OFFSET + 16 * parts;
    }

    /** Writes a descriptor's header, with a copy of the frame's header taken from {@code frame} at 0. */
    static void writeHeader(MemorySegment seg, long offset, int frameLength, int parts, MemorySegment frame) {
        seg.set(INT, offset, frameLength);
        seg.set(INT, offset + 4, parts);
        MemorySegment.copy(frame, 0, seg, offset + HEADER_OFFSET, FrameDescriptor.HEADER_LENGTH);
    }

    /** Writes part {@code j} of a descriptor. */
    static void writePart(MemorySegment seg, long offset, int j, long address, int key, int length) {
        long p = offset + PARTS_OFFSET + 16L * j;
        seg.set(LONG, p, address);
        seg.set(INT, p + 8, key);
        seg.set(INT, p + 12, length);
    }

    static int frameLength(MemorySegment seg, long offset) {
        return seg.get(INT, offset);
    }

    static int parts(MemorySegment seg, long offset) {
        return seg.get(INT, offset + 4);
    }

    static long partAddress(MemorySegment seg, long offset, int j) {
        return seg.get(LONG, offset + PARTS_OFFSET + 16L * j);
    }

    static int partKey(MemorySegment seg, long offset, int j) {
        return seg.get(INT, offset + PARTS_OFFSET + 16L * j + 8);
    }

    static int partLength(MemorySegment seg, long offset, int j) {
        return seg.get(INT, offset + PARTS_OFFSET + 16L * j + 12);
    }

    /**
     * Checks a received descriptor.
     *
     * @return null when it is well formed, else why not
     */
    static String check(MemorySegment seg, long offset, int messageLength, int maxFrameLength) {
        if (messageLength < descriptorLength(1)) {
            return "a rendezvous descriptor of " + messageLength + " bytes";
        }
        int n = parts(seg, offset);
        if (n < 1 || n > MAX_PARTS || messageLength != descriptorLength(n)) {
            return "a rendezvous descriptor of " + messageLength + " bytes with " + n + " parts";
        }
        long frameLength = Integer.toUnsignedLong(frameLength(seg, offset));
        if (frameLength < FrameDescriptor.HEADER_LENGTH || frameLength > maxFrameLength) {
            return "a rendezvous frame of " + frameLength + " bytes (at most " + maxFrameLength + ")";
        }
        long sum = 0;
        for (int j = 0; j < n; j++) {
            long len = Integer.toUnsignedLong(partLength(seg, offset, j));
            if (len == 0) {
                return "a rendezvous part of 0 bytes";
            }
            sum += len;
        }
        if (sum != frameLength) {
            return "rendezvous parts of " + sum + " bytes for a frame of " + frameLength;
        }
        long len = FrameDescriptor.check(seg, offset + HEADER_OFFSET, FrameDescriptor.HEADER_LENGTH, maxFrameLength);
        if (len < 0) {
            return "a rendezvous frame's header: " + FrameDescriptor.describe(len);
        }
        if (len != frameLength) {
            return "a rendezvous frame of " + frameLength + " bytes whose header says " + len;
        }
        return null;
    }

    // ---------------------------------------------------------------- sending side

    /** @return true when a frame may go by rendezvous now (a slot is free) */
    boolean canSend() {
        return !closed && invalidating + awaitingDone < SLOTS;
    }

    /**
     * Takes the next slot for {@code frame}, of {@code parts} parts; the caller binds its windows, or
     * registers its parts.
     *
     * @param tailRegion the registration of the second part, whose use the slot now holds, or null
     * @param register   whether the parts get regions of their own ({@link #register}), not windows
     * @return the slot
     */
    int begin(PooledBuffer frame, int parts, DeviceTable.UserRegion tailRegion, boolean register) {
        if (!canSend()) {
            throw new IllegalStateException("no rendezvous slot free");
        }
        int s = (oldest + invalidating + awaitingDone) % SLOTS;
        frames[s] = frame;
        tailRegions[s] = tailRegion;
        this.parts[s] = parts;
        registered[s] = register;
        awaitingDone++;
        return s;
    }

    /**
     * @return true when windows may be bound only while nothing else of the connection is outstanding
     *         (the device repeats binds after a retransmission); other frames' parts are registered
     */
    boolean registerWhenBusy() {
        return registerWhenBusy;
    }

    /** @return whether slot {@code s}'s parts were registered on their own, not bound to windows */
    boolean registered(int s) {
        return registered[s];
    }

    /**
     * Registers part {@code j} of slot {@code s}, {@code [address, address + length)}, on its own with
     * remote read access only (a slot {@link #begin begun} to be registered).
     *
     * @return the region's remote key
     * @throws dev.rdmarpc.ibverbs.VerbsException as the device refuses (ENOMEM: the locked-memory limit)
     */
    int register(int s, int j, long address, int length) {
        int i = s * MAX_PARTS + j;
        MemoryRegion r = pd.registerAddress(address, length, Access.REMOTE_READ.bit());
        regions[i] = r;
        return r.rkey(); // not in keys: those are the windows', each the last it was bound with
    }

    /**
     * Deregisters the parts' regions of the oldest done slot that still holds any, and counts each part
     * revoked: its key reaches nothing any more. The frame is released in its turn ({@link #released}).
     *
     * @return false when no done slot holds regions
     * @throws RuntimeException as a deregistration fails (the slot's other parts are deregistered all the same)
     */
    boolean deregisterNext() {
        for (int k = 0; k < invalidating; k++) {
            int s = (oldest + k) % SLOTS;
            if (registered[s] && regions[s * MAX_PARTS] != null) {
                RuntimeException failed = null;
                for (int j = 0; j < parts[s]; j++) {
                    try {
                        closeRegion(s * MAX_PARTS + j);
                    } catch (RuntimeException e) {
                        failed = e;
                    }
                }
                if (failed != null) {
                    throw failed;
                }
                invalidationsLeft[s] -= parts[s];
                return true;
            }
        }
        return false;
    }

    private void closeRegion(int i) {
        MemoryRegion r = regions[i];
        if (r != null) {
            regions[i] = null;
            r.close();
        }
    }

    /** @return the window of part {@code j} of slot {@code s} */
    MemoryWindow window(int s, int j) {
        return windows[s * MAX_PARTS + j];
    }

    /** Gives part {@code j} of slot {@code s} its next key (each binding has its own) and returns it. */
    int nextKey(int s, int j) {
        int i = s * MAX_PARTS + j;
        keys[i] = MemoryWindow.nextRkey(keys[i]);
        return keys[i];
    }

    /** @return the key part {@code j} of slot {@code s} was last bound with */
    int key(int s, int j) {
        return keys[s * MAX_PARTS + j];
    }

    /** @return the parts of slot {@code s} */
    int parts(int s) {
        return parts[s];
    }

    /**
     * The peer reports {@code n} more frames done: they are, in order, the oldest awaiting.
     *
     * @return the first slot now to invalidate ({@code n} consecutive slots, modulo {@link #SLOTS})
     * @throws IllegalArgumentException when the peer reports more than were sent
     */
    int done(int n) {
        if (n > awaitingDone) {
            throw new IllegalArgumentException("the peer reported " + n + " rendezvous frames done, " + awaitingDone
                    + " were in flight");
        }
        int first = (oldest + invalidating) % SLOTS;
        for (int k = 0; k < n; k++) {
            int s = (first + k) % SLOTS;
            invalidationsLeft[s] = parts[s];
        }
        awaitingDone -= n;
        invalidating += n;
        return first;
    }

    /** An invalidation of one of slot {@code s}'s windows completed; the frame is released in its turn ({@link #released}). */
    void invalidated(int s) {
        if ((s - oldest + SLOTS) % SLOTS >= invalidating || registered[s] || invalidationsLeft[s] <= 0) {
            throw new IllegalStateException("invalidation of rendezvous slot " + s + ", oldest " + oldest + ", "
                    + invalidating + " invalidating");
        }
        invalidationsLeft[s]--;
    }

    /**
     * Releases the oldest slot when every key of its frame is revoked, giving back the use of its second
     * part's registration.
     *
     * @return its frame's buffer to release, or null when the oldest slot is not done with (or none is)
     */
    PooledBuffer released() {
        if (invalidating == 0 || invalidationsLeft[oldest] > 0) {
            return null;
        }
        int s = oldest;
        PooledBuffer b = frames[s];
        frames[s] = null;
        unuse(s);
        oldest = (oldest + 1) % SLOTS;
        invalidating--;
        return b;
    }

    /** @return true when a frame held here has its second part in {@code u} */
    boolean holds(DeviceTable.UserRegion u) {
        for (DeviceTable.UserRegion r : tailRegions) {
            if (r == u) {
                return true;
            }
        }
        return false;
    }

    /** @return frames done whose keys are being revoked, or that wait for an older frame to be released */
    int invalidating() {
        return invalidating;
    }

    /** @return frames sent by rendezvous and not yet released */
    int inUse() {
        return invalidating + awaitingDone;
    }

    /**
     * After the queue pair is destroyed (nothing can read the frames any more): releases every frame
     * still held, deallocates the windows and deregisters the regions. Idempotent.
     */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int s = 0; s < SLOTS; s++) {
            PooledBuffer b = frames[s];
            if (b != null) {
                frames[s] = null;
                b.release();
            }
            unuse(s);
        }
        invalidating = 0;
        awaitingDone = 0;
        closeKeys();
    }

    private void unuse(int s) {
        DeviceTable.UserRegion r = tailRegions[s];
        if (r != null) {
            tailRegions[s] = null;
            r.unuse();
        }
    }

    /**
     * Deallocates the windows (bound or not) and deregisters the parts' regions, once; the frames stay
     * until {@link #close()}.
     */
    void closeKeys() {
        for (int i = 0; i < regions.length; i++) {
            try {
                closeRegion(i);
            } catch (RuntimeException e) {
                System.getLogger(Rendezvous.class.getName()).log(System.Logger.Level.WARNING,
                        "could not deregister a rendezvous frame's region", e);
            }
        }
        for (int i = 0; i < windows.length; i++) {
            MemoryWindow w = windows[i];
            if (w != null) {
                windows[i] = null;
                w.close();
            }
        }
    }

    @Override
    public String toString() {
        return "Rendezvous[" + (registerWhenBusy ? "regions when busy, " : "windows, ") + "oldest=" + oldest + ", invalidating=" + invalidating + ", awaitingDone=" + awaitingDone + "]";
    }
}
