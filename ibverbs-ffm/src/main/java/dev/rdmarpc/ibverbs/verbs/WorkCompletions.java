package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A reusable array of native {@code struct ibv_wc} that {@link CompletionQueue#poll} fills: a
 * flyweight, read by index, with no Java object per completion. Accessors read straight from
 * native memory and allocate nothing; entries beyond what the last poll returned hold stale data.
 *
 * <p>Owns its native memory (a shared arena, so the polling thread need not be the creating one);
 * {@link #close()} frees it, once. Not thread-safe: one polling thread at a time.
 */
public final class WorkCompletions implements AutoCloseable {
    /** {@code IBV_WC_WITH_IMM}: the completion carries immediate data. */
    public static final int WITH_IMM = 1 << 1;
    /** {@code IBV_WC_GRH}: a GRH is in the first 40 bytes of the receive buffer (UD). */
    public static final int GRH = 1 << 0;
    /** {@code IBV_WC_WITH_INV}: the completion carries an invalidated rkey. */
    public static final int WITH_INV = 1 << 3;

    /** Size and field offsets of {@code struct ibv_wc}, read once from the generated layout. */
    private static final class Offsets {
        static final long SIZE = ibv_wc.sizeof();
        static final long WR_ID = ibv_wc.wr_id$offset();
        static final long STATUS = ibv_wc.status$offset();
        static final long OPCODE = ibv_wc.opcode$offset();
        static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
        static final long BYTE_LEN = ibv_wc.byte_len$offset();
        static final long IMM_DATA = ibv_wc.imm_data$offset();
        /** A union with {@link #IMM_DATA}: the same four bytes, but in host order. */
        static final long INVALIDATED_RKEY = ibv_wc.invalidated_rkey$offset();
        static final long QP_NUM = ibv_wc.qp_num$offset();
        static final long SRC_QP = ibv_wc.src_qp$offset();
        static final long WC_FLAGS = ibv_wc.wc_flags$offset();
        static final long PKEY_INDEX = ibv_wc.pkey_index$offset();
        static final long SLID = ibv_wc.slid$offset();
        static final long SL = ibv_wc.sl$offset();
    }

    private final Arena arena;
    private final MemorySegment wc;
    private final int capacity;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final long address;

    /**
     * @param capacity how many completions one poll can take
     */
    public WorkCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, not " + capacity);
        }
        Ibverbs.ensureAvailability();
        this.capacity = capacity;
        this.arena = Arena.ofShared();
        this.wc = arena.allocate(Offsets.SIZE * capacity, 8);
        this.address = wc.address();
        VerbsResources.onCreated(ResourceKind.NATIVE_BUFFER);
    }

    /** How many completions it holds. */
    public int capacity() {
        return capacity;
    }

    /** The native {@code struct ibv_wc[capacity]}. */
    public MemorySegment segment() {
        return wc;
    }

    /** The native address for a poll of {@code max} entries, checking room and that this is open. */
    long pollAddress(int max) {
        if (max < 0 || max > capacity) {
            throw new IndexOutOfBoundsException("poll of " + max + " completions into " + capacity);
        }
        if (closed.get()) {
            throw new IllegalStateException("WorkCompletions is closed");
        }
        return address;
    }

    private long at(int i) {
        if (i < 0 || i >= capacity) {
            throw new IndexOutOfBoundsException("completion " + i + " of " + capacity);
        }
        return i * Offsets.SIZE;
    }

    /** The {@code wr_id} of the work request that completed. */
    public long wrId(int i) {
        return wc.get(ValueLayout.JAVA_LONG, at(i) + Offsets.WR_ID);
    }

    /** The status, as an enum constant (no allocation). */
    public WcStatus status(int i) {
        return WcStatus.of(statusCode(i));
    }

    /** The status as the C value. */
    public int statusCode(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.STATUS);
    }

    /** Whether the work request succeeded. */
    public boolean isSuccess(int i) {
        return statusCode(i) == 0;
    }

    /** What completed (only meaningful for a successful completion). */
    public WcOpcode opcode(int i) {
        return WcOpcode.of(opcodeCode(i));
    }

    /** The opcode as the C value. */
    public int opcodeCode(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.OPCODE);
    }

    /** The provider's own error code. */
    public int vendorError(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.VENDOR_ERR);
    }

    /** Bytes received (receives), or read (RDMA READ on some providers). */
    public int byteLength(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.BYTE_LEN);
    }

    /** The completion flags ({@link #WITH_IMM}, {@link #GRH}, {@link #WITH_INV}). */
    public int wcFlags(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.WC_FLAGS);
    }

    /** Whether the completion carries immediate data ({@link #immData(int)}). */
    public boolean hasImmData(int i) {
        return (wcFlags(i) & WITH_IMM) != 0;
    }

    /**
     * The immediate data in host order: the value the sender passed to
     * {@link SendWorkRequest#immData(int)} (on the wire and in {@code ibv_wc} it is big-endian).
     */
    public int immData(int i) {
        return Integer.reverseBytes(wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.IMM_DATA));
    }

    /**
     * Whether the receive completed a SEND_WITH_INV and carries the key it invalidated
     * ({@link #invalidatedRkey(int)}). Soft-RoCE (kernel 6.12) does not set {@code IBV_WC_WITH_INV} here:
     * it stores the kernel's {@code IB_WC_WITH_INVALIDATE} (1 &lt;&lt; 2, which libibverbs defines as
     * {@code IBV_WC_IP_CSUM_OK}), so this is false there although the key was invalidated and
     * {@code invalidated_rkey} holds it.
     */
    public boolean hasInvalidate(int i) {
        return (wcFlags(i) & WITH_INV) != 0;
    }

    /**
     * The key a SEND_WITH_INV invalidated here ({@code invalidated_rkey}): a union with the immediate
     * data, but in host order, so read as it is (the value the sender passed to
     * {@link SendWorkRequest#sendWithInvalidate}). Meaningful when {@link #hasInvalidate(int)}.
     */
    public int invalidatedRkey(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.INVALIDATED_RKEY);
    }

    /** The local queue pair the work request belonged to. */
    public int qpNum(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.QP_NUM);
    }

    /** The remote queue pair (UD receives). */
    public int srcQp(int i) {
        return wc.get(ValueLayout.JAVA_INT, at(i) + Offsets.SRC_QP);
    }

    /** The P_Key index (UD, GSI). */
    public int pkeyIndex(int i) {
        return Short.toUnsignedInt(wc.get(ValueLayout.JAVA_SHORT, at(i) + Offsets.PKEY_INDEX));
    }

    /** The source LID (UD on InfiniBand). */
    public int slid(int i) {
        return Short.toUnsignedInt(wc.get(ValueLayout.JAVA_SHORT, at(i) + Offsets.SLID));
    }

    /** The service level (UD on InfiniBand). */
    public int serviceLevel(int i) {
        return Byte.toUnsignedInt(wc.get(ValueLayout.JAVA_BYTE, at(i) + Offsets.SL));
    }

    /** A line for logs and test messages ({@code wr 7 SEND SUCCESS 64 bytes}); allocates. */
    public String describe(int i) {
        WcStatus s = status(i);
        return "wr " + wrId(i) + " " + (s == WcStatus.SUCCESS ? opcode(i) + " " : "") + s + " (" + s.text() + ")"
                + (s == WcStatus.SUCCESS ? " " + Integer.toUnsignedString(byteLength(i)) + " bytes" : "")
                + (hasImmData(i) ? " imm 0x" + Integer.toHexString(immData(i)) : "")
                + (hasInvalidate(i) ? " inv 0x" + Integer.toHexString(invalidatedRkey(i)) : "") + " qp " + qpNum(i);
    }

    /** Frees the native memory, once. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
            VerbsResources.onDestroyed(ResourceKind.NATIVE_BUFFER);
        }
    }
}
