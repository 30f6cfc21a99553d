package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Metadata;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Reads the metadata blocks of one connection's frames, on its I/O thread, and gives a block that
 * repeats one of the last {@value #SLOTS} it read (the same bytes) the {@link Metadata} read from
 * it before: the calls of a connection mostly carry the same headers and trailers (a gRPC call's
 * method, authority and status), and {@code Metadata} is immutable, so one instance serves them
 * all without a decode, a copy or an allocation. A block that differs is decoded as
 * {@link Metadata#readFrom} does, and remembered in place of the oldest one.
 *
 * <p>A block over {@value #MAX_KEPT} bytes is read but not remembered. When {@value #MISSES_BEFORE_SPARSE}
 * blocks in a row were all new (metadata that differs on every call, a trace id for instance), only
 * every {@value #MISSES_BEFORE_SPARSE}th new block is remembered, so such a connection pays little
 * for copies it never uses; the next repeat makes it remember every new block again.
 *
 * <p>One thread only (the connection's I/O thread); the blocks must have been checked
 * ({@link dev.rdmarpc.rpc.protocol.MetadataBlock#check}).
 */
public final class MetadataReader {
    /** How many distinct blocks are remembered. */
    public static final int SLOTS = 4;
    /** The largest block remembered, in bytes. */
    public static final int MAX_KEPT = 1024;
    /** New blocks in a row after which only one in this many is remembered. */
    public static final int MISSES_BEFORE_SPARSE = 16;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The remembered blocks' bytes (heap segments over arrays of their own) and what they read as. */
    private final MemorySegment[] blocks = new MemorySegment[SLOTS];
    private final Metadata[] read = new Metadata[SLOTS];
    /** The slot the next new block replaces. */
    private int oldest;
    /** New blocks read since the last repeat. */
    private int misses;

    /**
     * @param buf   memory holding a checked metadata block
     * @param block where it starts
     * @return its entries: the instance read before from the same bytes, when remembered
     */
    public Metadata read(MemorySegment buf, long block) {
        int length = buf.get(INT, block);
        for (int i = 0; i < SLOTS; i++) {
            MemorySegment b = blocks[i];
            if (b != null && b.byteSize() == length && MemorySegment.mismatch(buf, block, block + length, b, 0, length) < 0) {
                misses = 0;
                return read[i];
            }
        }
        Metadata md = Metadata.readFrom(buf, block);
        if (length <= MAX_KEPT && (misses < MISSES_BEFORE_SPARSE || misses % MISSES_BEFORE_SPARSE == 0)) {
            byte[] copy = new byte[length];
            MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, block, copy, 0, length);
            blocks[oldest] = MemorySegment.ofArray(copy);
            read[oldest] = md;
            oldest = (oldest + 1) % SLOTS;
        }
        if (misses < Integer.MAX_VALUE) {
            misses++;
        }
        return md;
    }
}
