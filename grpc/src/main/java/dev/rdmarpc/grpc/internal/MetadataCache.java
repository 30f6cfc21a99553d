package dev.rdmarpc.grpc.internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * The last few metadata conversions of one transport, found by content: the calls of a channel
 * mostly carry the same headers and trailers (the same keys and values, call after call), so each
 * distinct set is converted once and its result shared, not converted again for every call.
 *
 * <p>An entry is found by a tag compared by identity (a method descriptor, or none), an extra
 * value compared with {@code equals} (an authority, or none) and a key compared by content: a
 * {@code byte[]} or {@code byte[][]} byte by byte, anything else (an immutable rdmarpc
 * {@link dev.rdmarpc.rpc.Metadata}) with {@code equals}. An entry keeps its own copy of a byte key,
 * so a caller that changes its arrays later cannot change what the entry matches. {@value #SLOTS}
 * slots, each keeping the last conversion of the hash the caller gives; entries are immutable, so
 * threads share them without a lock (a lost race only converts again). Only what nobody changes
 * may be cached: immutable values, or arrays that every user copies first.
 *
 * @param <V> what the metadata converts to
 */
final class MetadataCache<V> {
    static final int SLOTS = 8;

    private record Entry<V>(Object tag, Object extra, Object key, V value) {
    }

    @SuppressWarnings("unchecked")
    private final Entry<V>[] entries = new Entry[SLOTS];

    /**
     * @param hash picks the slot: equal keys (with tag and extra) must give equal hashes
     * @return what {@code key} (with this tag and extra) converted to last, or null when not cached
     */
    V get(int hash, Object tag, Object extra, Object key) {
        Entry<V> e = entries[hash & (SLOTS - 1)];
        if (e == null || e.tag != tag || !Objects.equals(e.extra, extra) || !same(e.key, key)) {
            return null;
        }
        return e.value;
    }

    /** Keeps {@code value} as what {@code key} (with this tag and extra) converts to; copies a byte key. */
    void put(int hash, Object tag, Object extra, Object key, V value) {
        entries[hash & (SLOTS - 1)] = new Entry<>(tag, extra, copy(key), value);
    }

    /** @return a slot hash of a tag compared by identity */
    static int hashOf(Object tag) {
        return tag == null ? 0 : System.identityHashCode(tag);
    }

    private static Object copy(Object key) {
        if (key instanceof byte[] b) {
            return b.clone();
        }
        if (key instanceof byte[][] bytes) {
            byte[][] c = new byte[bytes.length][];
            for (int i = 0; i < bytes.length; i++) {
                c[i] = bytes[i] == null ? null : bytes[i].clone();
            }
            return c;
        }
        return key;
    }

    private static boolean same(Object a, Object b) {
        if (a instanceof byte[] x) {
            return b instanceof byte[] y && Arrays.equals(x, y);
        }
        if (a instanceof byte[][] x) {
            if (!(b instanceof byte[][] y) || x.length != y.length) {
                return false;
            }
            for (int i = 0; i < x.length; i++) {
                if (!Arrays.equals(x[i], y[i])) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }
}
