package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.protocol.MetadataBlock;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * The metadata of a received frame, read in place: a flyweight over the frame's metadata block,
 * reused for every call of a connection and valid only as long as the frame is (until a raw
 * handler returns, or a response listener's callback does). Looking a key up and reading its value
 * through {@link #valueOffset} and {@link #valueLength} allocates nothing; {@link #get} and
 * {@link #toMetadata()} copy to the heap.
 * {@snippet :
 * MetadataView md = call.requestMetadataView();
 * long at = md.valueOffset("tenant");
 * if (at >= 0) {
 *     int tenant = call.buffer().get(ValueLayout.JAVA_BYTE, at); // first byte of the value
 * }
 * }
 */
public final class MetadataView {
    private MemorySegment buffer;
    private long block;
    private boolean present;

    /** A view of no metadata, until {@link #wrap}ped. */
    public MetadataView() {
    }

    /**
     * Places the view over a checked block ({@link MetadataBlock#check}), or over none.
     *
     * @param buffer the frame's memory
     * @param block  where the block starts
     * @param length the block's length, 0 when the frame has no metadata
     * @return this
     */
    public MetadataView wrap(MemorySegment buffer, long block, int length) {
        this.buffer = buffer;
        this.block = block;
        this.present = length > 0;
        return this;
    }

    /** Forgets the frame. */
    public void clear() {
        buffer = null;
        present = false;
    }

    /** @return the frame's memory, which {@link #valueOffset} points into */
    public MemorySegment buffer() {
        return buffer;
    }

    /** @return true when the frame carries no entry */
    public boolean isEmpty() {
        return size() == 0;
    }

    /** @return the number of entries */
    public int size() {
        return present ? MetadataBlock.count(buffer, block) : 0;
    }

    /** @return true when {@code key} has a value */
    public boolean containsKey(CharSequence key) {
        return entry(key) >= 0;
    }

    private long entry(CharSequence key) {
        return present ? MetadataBlock.find(buffer, block, key) : -1;
    }

    /**
     * @param key a key
     * @return where its value starts in {@link #buffer()}, or -1 when absent
     */
    public long valueOffset(CharSequence key) {
        long e = entry(key);
        return e < 0 ? -1 : MetadataBlock.valueOffset(buffer, e);
    }

    /**
     * @param key a key
     * @return its value's length in bytes, or -1 when absent
     */
    public int valueLength(CharSequence key) {
        long e = entry(key);
        return e < 0 ? -1 : MetadataBlock.valueLength(buffer, e);
    }

    /**
     * Compares a value with bytes, in place; allocates nothing.
     *
     * @param key   a key
     * @param bytes the expected value
     * @return true when {@code key} has exactly these bytes as its value
     */
    public boolean valueEquals(CharSequence key, byte[] bytes) {
        long e = entry(key);
        if (e < 0 || MetadataBlock.valueLength(buffer, e) != bytes.length) {
            return false;
        }
        long v = MetadataBlock.valueOffset(buffer, e);
        for (int i = 0; i < bytes.length; i++) {
            if (buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, v + i) != bytes[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * @param key a key
     * @return its value as a string (UTF-8), or null when absent; allocates
     */
    public String get(CharSequence key) {
        long e = entry(key);
        if (e < 0) {
            return null;
        }
        byte[] b = new byte[MetadataBlock.valueLength(buffer, e)];
        MemorySegment.copy(buffer, java.lang.foreign.ValueLayout.JAVA_BYTE, MetadataBlock.valueOffset(buffer, e), b, 0, b.length);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** @return the entries copied to the heap, {@link Metadata#EMPTY} when none */
    public Metadata toMetadata() {
        return present ? Metadata.readFrom(buffer, block) : Metadata.EMPTY;
    }

    @Override
    public String toString() {
        return toMetadata().toString();
    }
}
