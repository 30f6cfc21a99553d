package dev.rdmarpc.rpc;

import dev.rdmarpc.rpc.protocol.MetadataBlock;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A call's metadata: key/value headers that travel with a request (client to server, set with
 * {@link CallOptions#withMetadata}) or with its response (server to client, set with
 * {@link CallContext#responseMetadata(Metadata)}, read from {@link Reply#metadata()} or
 * {@link RpcException#metadata()}). Tracing ids, auth tokens, tenant tags.
 *
 * <p>Keys are 1 to 255 characters of {@code a-z 0-9 - _ .} (lower case, as in gRPC). A key ending
 * in {@code -bin} holds bytes ({@link #with(String, byte[])}, {@link #getBytes}); any other holds a
 * string, sent as UTF-8 ({@link #with(String, String)}, {@link #get}). Each value is at most 65,535
 * bytes, and a frame's whole metadata at most {@code maxMetadataBytes} of the sender and of the
 * receiver (default 8 KiB; {@link #encodedLength()} is what counts): a call whose metadata is
 * larger fails with {@link Status#PAYLOAD_TOO_LARGE} and a message that says so.
 *
 * <p>Immutable: {@code with} and {@code without} return a copy, so one instance can be shared by
 * every call. Keys keep the order they were first added in.
 * {@snippet :
 * Metadata md = Metadata.of("trace-id", "4bf92f35").with("token-bin", tokenBytes);
 * Reply<String> reply = client.exchange(ECHO, "hi", CallOptions.DEFAULT.withMetadata(md));
 * String served = reply.metadata().get("served-by");
 * }
 */
public final class Metadata {
    /** No metadata: a frame without it carries no metadata block at all. */
    public static final Metadata EMPTY = new Metadata(new String[0], new byte[0][], MetadataBlock.LENGTH_FIELD);

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String[] keys;
    private final byte[][] values;
    private final int encodedLength;
    /** {@link #hashCode}, once computed (0: not yet; it is computed again, the same, by a racing thread). */
    private int hash;
    /**
     * The block as {@link #writeTo} writes it, kept once this instance is written a second time (one
     * instance shared by many calls is then written with one copy); null before.
     */
    private volatile byte[] encoded;
    /** Written once already (a hint: a race only keeps the block a write later, or one more time). */
    private boolean writtenOnce;

    private Metadata(String[] keys, byte[][] values, int encodedLength) {
        this.keys = keys;
        this.values = values;
        this.encodedLength = encodedLength;
    }

    /**
     * @param key   a string key (not ending in {@code -bin})
     * @param value its value
     * @return metadata of this one entry
     */
    public static Metadata of(String key, String value) {
        return EMPTY.with(key, value);
    }

    /**
     * @param key   a binary key (ending in {@code -bin})
     * @param value its bytes (copied)
     * @return metadata of this one entry
     */
    public static Metadata of(String key, byte[] value) {
        return EMPTY.with(key, value);
    }

    /**
     * @param key   a key not ending in {@code -bin}
     * @param value the value, sent as UTF-8 (at most 65,535 bytes)
     * @return a copy with this entry (replacing the key's earlier value)
     * @throws IllegalArgumentException for an illegal key, a {@code -bin} key, or a value too long
     */
    public Metadata with(String key, String value) {
        checkKey(key);
        if (isBinary(key)) {
            throw new IllegalArgumentException("metadata key \"" + key + "\" ends in -bin: its value is bytes, use with(String, byte[])");
        }
        return put(key, Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param key   a key ending in {@code -bin}
     * @param value the bytes (copied; at most 65,535)
     * @return a copy with this entry (replacing the key's earlier value)
     * @throws IllegalArgumentException for an illegal key, a key not ending in {@code -bin}, or a value too long
     */
    public Metadata with(String key, byte[] value) {
        checkKey(key);
        if (!isBinary(key)) {
            throw new IllegalArgumentException("metadata key \"" + key + "\" holds a string; binary values need a key ending in -bin");
        }
        return put(key, Objects.requireNonNull(value, "value").clone());
    }

    /**
     * @param other metadata to add
     * @return a copy with every entry of {@code other} added (its values replacing this one's for the same keys)
     */
    public Metadata withAll(Metadata other) {
        Metadata m = this;
        for (int i = 0; i < other.keys.length; i++) {
            m = m.put(other.keys[i], other.values[i]);
        }
        return m;
    }

    /**
     * @param key a key
     * @return a copy without it (this instance when it has no such key)
     */
    public Metadata without(String key) {
        int i = indexOf(key);
        if (i < 0) {
            return this;
        }
        String[] k = new String[keys.length - 1];
        byte[][] v = new byte[keys.length - 1][];
        System.arraycopy(keys, 0, k, 0, i);
        System.arraycopy(keys, i + 1, k, i, k.length - i);
        System.arraycopy(values, 0, v, 0, i);
        System.arraycopy(values, i + 1, v, i, v.length - i);
        return new Metadata(k, v, encodedLength - entryLength(keys[i], values[i]));
    }

    private Metadata put(String key, byte[] value) {
        if (value.length > MetadataBlock.MAX_VALUE_LENGTH) {
            throw new IllegalArgumentException("metadata value of \"" + key + "\" has " + value.length
                    + " bytes; at most " + MetadataBlock.MAX_VALUE_LENGTH);
        }
        int i = indexOf(key);
        if (i >= 0) {
            byte[][] v = values.clone();
            v[i] = value;
            return new Metadata(keys, v, encodedLength - values[i].length + value.length);
        }
        String[] k = Arrays.copyOf(keys, keys.length + 1);
        byte[][] v = Arrays.copyOf(values, values.length + 1);
        k[keys.length] = key;
        v[values.length] = value;
        return new Metadata(k, v, encodedLength + entryLength(key, value));
    }

    private static int entryLength(String key, byte[] value) {
        return MetadataBlock.ENTRY_HEADER + key.length() + value.length;
    }

    private int indexOf(String key) {
        for (int i = 0; i < keys.length; i++) {
            if (keys[i].equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param key a key
     * @throws IllegalArgumentException when it is not 1 to 255 characters of {@code a-z 0-9 - _ .}
     */
    static void checkKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.length() > MetadataBlock.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("metadata key must have 1 to " + MetadataBlock.MAX_KEY_LENGTH
                    + " characters: \"" + key + "\"");
        }
        for (int i = 0; i < key.length(); i++) {
            if (!MetadataBlock.isKeyChar(key.charAt(i))) {
                throw new IllegalArgumentException("metadata key \"" + key + "\" has '" + key.charAt(i)
                        + "': keys are a-z 0-9 - _ . (lower case)");
            }
        }
    }

    /** @return true when {@code key} holds bytes (ends in {@code -bin}) */
    public static boolean isBinary(String key) {
        return key.endsWith(MetadataBlock.BINARY_SUFFIX);
    }

    /**
     * @param key a string key
     * @return its value, or null when absent
     * @throws IllegalArgumentException for a {@code -bin} key (use {@link #getBytes})
     */
    public String get(String key) {
        if (isBinary(key)) {
            throw new IllegalArgumentException("metadata key \"" + key + "\" holds bytes: use getBytes");
        }
        int i = indexOf(key);
        return i < 0 ? null : new String(values[i], StandardCharsets.UTF_8);
    }

    /**
     * @param key any key
     * @return a copy of its value's bytes (UTF-8 for a string key), or null when absent
     */
    public byte[] getBytes(String key) {
        int i = indexOf(key);
        return i < 0 ? null : values[i].clone();
    }

    /** @return true when {@code key} has a value */
    public boolean containsKey(String key) {
        return indexOf(key) >= 0;
    }

    /** @return the keys, in the order they were added */
    public List<String> keys() {
        return Collections.unmodifiableList(Arrays.asList(keys));
    }

    /** @return the number of entries */
    public int size() {
        return keys.length;
    }

    /** @return true when there is no entry */
    public boolean isEmpty() {
        return keys.length == 0;
    }

    /**
     * @return the bytes this metadata takes in a frame: the block's 4-byte length, then 3 bytes
     *         plus key and value per entry (what {@code maxMetadataBytes} limits)
     */
    public int encodedLength() {
        return encodedLength;
    }

    /**
     * Writes this metadata as a metadata block ({@link MetadataBlock}), as frames carry it.
     *
     * @param buf where to write
     * @param at  where the block starts; {@link #encodedLength()} bytes are written
     */
    public void writeTo(MemorySegment buf, long at) {
        byte[] e = encoded;
        if (e != null) {
            MemorySegment.copy(e, 0, buf, ValueLayout.JAVA_BYTE, at, e.length);
            return;
        }
        encode(buf, at);
        if (writtenOnce) {
            byte[] b = new byte[encodedLength];
            encode(MemorySegment.ofArray(b), 0);
            encoded = b;
        } else {
            writtenOnce = true;
        }
    }

    private void encode(MemorySegment buf, long at) {
        buf.set(INT, at, encodedLength);
        long p = at + MetadataBlock.LENGTH_FIELD;
        for (int i = 0; i < keys.length; i++) {
            String k = keys[i];
            byte[] v = values[i];
            buf.set(ValueLayout.JAVA_BYTE, p, (byte) k.length());
            buf.set(SHORT, p + 1, (short) v.length);
            p += MetadataBlock.ENTRY_HEADER;
            for (int j = 0; j < k.length(); j++) {
                buf.set(ValueLayout.JAVA_BYTE, p + j, (byte) k.charAt(j));
            }
            p += k.length();
            MemorySegment.copy(v, 0, buf, ValueLayout.JAVA_BYTE, p, v.length);
            p += v.length;
        }
    }

    /**
     * Reads a metadata block that {@link MetadataBlock#check} accepted; a key found twice keeps its
     * first value.
     *
     * @param buf   the frame's memory
     * @param block where the block starts
     * @return its entries, copied to the heap
     */
    public static Metadata readFrom(MemorySegment buf, long block) {
        long end = block + buf.get(INT, block);
        int count = MetadataBlock.count(buf, block);
        if (count == 0) {
            return EMPTY;
        }
        String[] k = new String[count];
        byte[][] v = new byte[count][];
        int n = 0;
        int length = MetadataBlock.LENGTH_FIELD;
        for (long p = block + MetadataBlock.LENGTH_FIELD; p < end; p = MetadataBlock.next(buf, p)) {
            byte[] keyBytes = new byte[MetadataBlock.keyLength(buf, p)];
            MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, MetadataBlock.keyOffset(p), keyBytes, 0, keyBytes.length);
            String key = new String(keyBytes, StandardCharsets.ISO_8859_1);
            if (indexOf(k, n, key) >= 0) {
                continue; // a key repeated: its first value counts
            }
            byte[] value = new byte[MetadataBlock.valueLength(buf, p)];
            MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, MetadataBlock.valueOffset(buf, p), value, 0, value.length);
            k[n] = key;
            v[n++] = value;
            length += entryLength(key, value);
        }
        return n == count ? new Metadata(k, v, length) : new Metadata(Arrays.copyOf(k, n), Arrays.copyOf(v, n), length);
    }

    private static int indexOf(String[] keys, int n, String key) {
        for (int i = 0; i < n; i++) {
            if (keys[i].equals(key)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof Metadata m) || m.keys.length != keys.length) {
            return false;
        }
        for (int i = 0; i < keys.length; i++) {
            int j = m.indexOf(keys[i]);
            if (j < 0 || !Arrays.equals(values[i], m.values[j])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            for (int i = 0; i < keys.length; i++) {
                h += keys[i].hashCode() ^ Arrays.hashCode(values[i]);
            }
            hash = h;
        }
        return h;
    }

    /** @return the entries, binary values in base64 */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Metadata{");
        for (int i = 0; i < keys.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(keys[i]).append('=');
            sb.append(isBinary(keys[i]) ? Base64.getEncoder().encodeToString(values[i])
                    : new String(values[i], StandardCharsets.UTF_8));
        }
        return sb.append('}').toString();
    }
}
