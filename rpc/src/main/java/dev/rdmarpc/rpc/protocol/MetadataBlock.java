package dev.rdmarpc.rpc.protocol;

import static dev.rdmarpc.rpc.protocol.FrameDescriptor.BYTE;
import static dev.rdmarpc.rpc.protocol.FrameDescriptor.INT;
import static dev.rdmarpc.rpc.protocol.FrameDescriptor.SHORT;

import java.lang.foreign.MemorySegment;

/**
 * The metadata block: a call's key/value headers at the start of the payload of a frame with
 * {@link FrameDescriptor#FLAG_METADATA}. Little-endian, unaligned:
 * <pre>
 * block  = length:u32 entry*          length counts the whole block, these 4 bytes included
 * entry  = keyLength:u8 valueLength:u16 key value
 * </pre>
 * A key is 1 to 255 bytes of {@code a-z 0-9 - _ .}; a key ending in {@code -bin} has a binary value,
 * any other a UTF-8 string. A sender writes each key once; a receiver that finds a key twice reads
 * the first. The block must end exactly where its
 * last entry does, within the payload. The helpers here read a block in place and allocate nothing.
 */
public final class MetadataBlock {
    /** Bytes of the block's length field. */
    public static final int LENGTH_FIELD = 4;
    /** Bytes of an entry's two length fields. */
    public static final int ENTRY_HEADER = 3;
    /** The longest key, in bytes. */
    public static final int MAX_KEY_LENGTH = 255;
    /** The longest value, in bytes. */
    public static final int MAX_VALUE_LENGTH = 0xFFFF;
    /** The default most bytes of metadata (the whole block) an endpoint sends or takes in one frame: 8 KiB. */
    public static final int DEFAULT_MAX_BYTES = 8 << 10;
    /** The largest {@code maxMetadataBytes} an endpoint may set: 1 MiB. */
    public static final int MAX_BYTES_LIMIT = 1 << 20;
    /** The key suffix of binary values. */
    public static final String BINARY_SUFFIX = "-bin";

    private MetadataBlock() {
    }

    /** @return true when {@code c} may appear in a key */
    public static boolean isKeyChar(int c) {
        return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.';
    }

    /**
     * Checks the structure of a block: its length within the payload, every entry whole, keys legal.
     * (Its size against a limit is the caller's check, so that it can answer with a status
     * of its own.)
     *
     * @param buf           the frame's memory
     * @param block         where the block starts (the payload's start)
     * @param payloadLength the frame's payload length
     * @return null when well formed, else why not
     */
    public static String check(MemorySegment buf, long block, int payloadLength) {
        if (payloadLength < LENGTH_FIELD) {
            return "metadata flag set but the payload has " + payloadLength + " bytes, fewer than a block's length field";
        }
        int length = buf.get(INT, block);
        if (length < LENGTH_FIELD || length > payloadLength) {
            return "metadata block length " + length + " is not within the payload's " + payloadLength + " bytes";
        }
        long end = block + length;
        long p = block + LENGTH_FIELD;
        while (p < end) {
            if (end - p < ENTRY_HEADER) {
                return "metadata entry header cut short at byte " + (p - block) + " of the block";
            }
            int k = buf.get(BYTE, p) & 0xFF;
            int v = buf.get(SHORT, p + 1) & 0xFFFF;
            if (k == 0) {
                return "empty metadata key at byte " + (p - block) + " of the block";
            }
            long key = p + ENTRY_HEADER;
            if (key + k + v > end) {
                return "metadata entry at byte " + (p - block) + " runs past the block's end";
            }
            for (int i = 0; i < k; i++) {
                int c = buf.get(BYTE, key + i) & 0xFF;
                if (!isKeyChar(c)) {
                    return "metadata key at byte " + (p - block) + " has character 0x" + Integer.toHexString(c)
                            + " (keys are a-z 0-9 - _ .)";
                }
            }
            p = key + k + v;
        }
        return null;
    }

    /** @return the offset of the entry after the one at {@code entry} */
    public static long next(MemorySegment buf, long entry) {
        return entry + ENTRY_HEADER + (buf.get(BYTE, entry) & 0xFF) + (buf.get(SHORT, entry + 1) & 0xFFFF);
    }

    /** @return the key length of the entry at {@code entry} */
    public static int keyLength(MemorySegment buf, long entry) {
        return buf.get(BYTE, entry) & 0xFF;
    }

    /** @return the value length of the entry at {@code entry} */
    public static int valueLength(MemorySegment buf, long entry) {
        return buf.get(SHORT, entry + 1) & 0xFFFF;
    }

    /** @return where the key of the entry at {@code entry} starts */
    public static long keyOffset(long entry) {
        return entry + ENTRY_HEADER;
    }

    /** @return where the value of the entry at {@code entry} starts */
    public static long valueOffset(MemorySegment buf, long entry) {
        return entry + ENTRY_HEADER + (buf.get(BYTE, entry) & 0xFF);
    }

    /**
     * Finds an entry by key, comparing in place.
     *
     * @param buf   memory holding a checked block
     * @param block where it starts
     * @param key   the key
     * @return the entry's offset, or -1 when no entry has that key
     */
    public static long find(MemorySegment buf, long block, CharSequence key) {
        long end = block + buf.get(INT, block);
        int k = key.length();
        for (long p = block + LENGTH_FIELD; p < end; p = next(buf, p)) {
            if ((buf.get(BYTE, p) & 0xFF) == k && keyEquals(buf, p + ENTRY_HEADER, key)) {
                return p;
            }
        }
        return -1;
    }

    private static boolean keyEquals(MemorySegment buf, long at, CharSequence key) {
        for (int i = 0, n = key.length(); i < n; i++) {
            if ((buf.get(BYTE, at + i) & 0xFF) != key.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** @return the number of entries of the checked block at {@code block} */
    public static int count(MemorySegment buf, long block) {
        long end = block + buf.get(INT, block);
        int n = 0;
        for (long p = block + LENGTH_FIELD; p < end; p = next(buf, p)) {
            n++;
        }
        return n;
    }
}
