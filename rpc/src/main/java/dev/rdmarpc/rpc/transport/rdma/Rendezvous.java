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
 * Rendezvous frames: a frame of at least {@link RdmaConfig.Send#rendezvousThreshold} bytes is not sent
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
 * retransmission ({@link DeviceTable.Device#bindsRepeatedByRetransmission}, Soft-RoCE) a window could be
 * bound only while nothing else of the connection is outstanding, which serializes a busy connection's
 * frames. There each part is instead registered on its own ({@code ibv_reg_mr} on exactly the part's
 * bytes, remote read only): the key is the region's, it covers the part alone (a region's bounds are
 * exact on every device, rxe's too, where a window's are its region's), and the region is deregistered
 * once the peer reports the frame done (at the sender's next flush), which revokes the key before the
 * frame is released. The same guarantee, no work request on the send queue, at the cost of a
 * registration and a deregistration per part (system calls; {@code RegistrationCostTest} times them).
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
    /** Each part has a region of its own instead of a window ({@link #registerPerFrame()}). */
    private final boolean registerPerFrame;
    /** The windows, or null when parts are registered per frame. */
    private final MemoryWindow[] windows;
    /** The parts' own regions while a frame holds them, when parts are registered per frame. */
    private final MemoryRegion[] regions = new MemoryRegion[SLOTS * MAX_PARTS];
    private final int[] keys = new int[SLOTS * MAX_PARTS];
    private final PooledBuffer[] frames = new PooledBuffer[SLOTS];
    /** The registration a slot's frame's second part lies in (a use held until the frame is released), or null. */
    private final DeviceTable.UserRegion[] tailRegions = new DeviceTable.UserRegion[SLOTS];
    private final int[] parts = new int[SLOTS];
    private final int[] invalidationsLeft = new int[SLOTS];
    /** The oldest slot in use (invalidating, or waiting to be done). */
    private int oldest;
    /** Slots whose windows are being invalidated, from {@link #oldest}. */
    private int invalidating;
    /** Slots sent and not yet done, after those. */
    private int awaitingDone;
    private boolean closed;

    /**
     * Allocates the connection's windows, unless parts are registered per frame.
     *
     * @param registerPerFrame give each part a region of its own instead of binding a window to it
     * @throws RuntimeException as the device refuses a window (those allocated are closed)
     */
    Rendezvous(ProtectionDomain pd, boolean registerPerFrame) {
        this.pd = pd;
        this.registerPerFrame = registerPerFrame;
        this.windows = registerPerFrame ? null : new MemoryWindow[SLOTS * MAX_PARTS];
        if (registerPerFrame) {
            return;
        }
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
     * Takes the next slot for {@code frame}, of {@code parts} parts; the caller binds its windows.
     *
     * @param tailRegion the registration of the second part, whose use the slot now holds, or null
     * @return the slot
     */
    int begin(PooledBuffer frame, int parts, DeviceTable.UserRegion tailRegion) {
        if (!canSend()) {
            throw new IllegalStateException("no rendezvous slot free");
        }
        int s = (oldest + invalidating + awaitingDone) % SLOTS;
        frames[s] = frame;
        tailRegions[s] = tailRegion;
        this.parts[s] = parts;
        awaitingDone++;
        return s;
    }

    /** @return true when each part gets a region of its own, not a window */
    boolean registerPerFrame() {
        return registerPerFrame;
    }

    /**
     * Registers part {@code j} of slot {@code s}, {@code [address, address + length)}, on its own with
     * remote read access only (when parts are registered per frame).
     *
     * @return the region's remote key
     * @throws dev.rdmarpc.ibverbs.VerbsException as the device refuses (ENOMEM: the locked-memory limit)
     */
    int register(int s, int j, long address, int length) {
        int i = s * MAX_PARTS + j;
        MemoryRegion r = pd.registerAddress(address, length, Access.REMOTE_READ.bit());
        regions[i] = r;
        keys[i] = r.rkey();
        return keys[i];
    }

    /**
     * Deregisters the parts' regions of slot {@code s}, the oldest being invalidated, and counts each
     * part invalidated (when parts are registered per frame): its key reaches nothing any more.
     *
     * @return the frame's buffer to release
     * @throws RuntimeException as a deregistration fails (the slot's other parts are deregistered all the same)
     */
    PooledBuffer deregister(int s) {
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
        PooledBuffer b = null;
        for (int j = 0; j < parts[s]; j++) {
            b = invalidated(s);
        }
        return b;
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

    /**
     * An invalidation of slot {@code s} completed. After the slot's last, the use of its second part's
     * registration is given back here.
     *
     * @return the frame's buffer to release when it was the slot's last, else null
     */
    PooledBuffer invalidated(int s) {
        if (invalidating == 0 || s != oldest || invalidationsLeft[s] <= 0) {
            throw new IllegalStateException("invalidation of rendezvous slot " + s + ", oldest " + oldest + ", "
                    + invalidating + " invalidating");
        }
        if (--invalidationsLeft[s] > 0) {
            return null;
        }
        PooledBuffer b = frames[s];
        frames[s] = null;
        unuse(s);
        oldest = (oldest + 1) % SLOTS;
        invalidating--;
        return b;
    }

    /** @return the oldest slot in use: the next to be released */
    int oldest() {
        return oldest;
    }

    /** @return frames whose windows are being invalidated */
    int invalidating() {
        return invalidating;
    }

    /** @return frames sent by rendezvous and not yet released */
    int inUse() {
        return invalidating + awaitingDone;
    }

    /**
     * After the queue pair is destroyed (nothing can read the frames any more): releases every frame
     * still held and deallocates the windows or deregisters the regions. Idempotent.
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
     * Deallocates the windows (bound or not) or deregisters the parts' regions, once; the frames stay
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
        if (windows == null) {
            return;
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
        return "Rendezvous[" + (registerPerFrame ? "regions, " : "windows, ") + "oldest=" + oldest + ", invalidating=" + invalidating + ", awaitingDone=" + awaitingDone + "]";
    }
}
