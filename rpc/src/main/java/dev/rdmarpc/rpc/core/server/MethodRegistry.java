package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.AsyncHandler;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RawHandler;
import dev.rdmarpc.rpc.RpcProvider;
import dev.rdmarpc.rpc.RpcProvider.Registration.Kind;
import dev.rdmarpc.rpc.StreamHandler;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Method id to handler: built once before the server starts, then read-only (an open-addressing
 * table of ints, no boxing on lookup).
 */
public final class MethodRegistry {
    /** One registered method. */
    public record Entry(Method<?, ?> method, Kind mode, Handler<?, ?> handler, RawHandler raw, AsyncHandler<?, ?> async,
                        StreamHandler<?, ?> stream) {
        /** A unary method's entry. */
        public Entry(Method<?, ?> method, Kind mode, Handler<?, ?> handler, RawHandler raw, AsyncHandler<?, ?> async) {
            this(method, mode, handler, raw, async, null);
        }
    }

    private final Map<Integer, Entry> entries = new LinkedHashMap<>();
    private int[] keys;
    private Entry[] values;
    private int mask;

    /** Creates an empty registry. */
    public MethodRegistry() {
    }

    /**
     * @param entry the method to add
     * @throws IllegalArgumentException when its id is taken (the server's builder refuses such a
     *                                  registration first, saying which methods clash)
     */
    public void add(Entry entry) {
        if (entries.putIfAbsent(entry.method().id(), entry) != null) {
            throw new IllegalArgumentException("method id 0x" + Integer.toHexString(entry.method().id())
                    + " registered twice (" + entry.method().name() + ")");
        }
    }

    /**
     * @param methods the registered methods, their ids distinct
     * @return a registry of them (which {@link ServerCore} freezes)
     * @throws IllegalArgumentException when two have the same id
     */
    public static MethodRegistry of(java.util.List<RpcProvider.Registration> methods) {
        MethodRegistry registry = new MethodRegistry();
        for (RpcProvider.Registration r : methods) {
            Object h = r.handler();
            registry.add(switch (r.kind()) {
                case RAW -> new Entry(r.method(), r.kind(), null, (RawHandler) h, null);
                case INLINE, BLOCKING -> new Entry(r.method(), r.kind(), (Handler<?, ?>) h, null, null);
                case ASYNC -> new Entry(r.method(), r.kind(), null, null, (AsyncHandler<?, ?>) h);
                case STREAM -> new Entry(r.method(), r.kind(), null, null, null, (StreamHandler<?, ?>) h);
            });
        }
        return registry;
    }

    /** Builds the lookup table; no {@link #add} afterwards. */
    public void freeze() {
        int size = Integer.highestOneBit(Math.max(4, entries.size() * 4 - 1)) << 1;
        keys = new int[size];
        values = new Entry[size];
        mask = size - 1;
        for (Entry e : entries.values()) {
            int i = mix(e.method().id()) & mask;
            while (values[i] != null) {
                i = (i + 1) & mask;
            }
            keys[i] = e.method().id();
            values[i] = e;
        }
    }

    /**
     * @param methodId a wire method id
     * @return its entry, or null
     */
    public Entry get(int methodId) {
        int i = mix(methodId) & mask;
        Entry e;
        while ((e = values[i]) != null) {
            if (keys[i] == methodId) {
                return e;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** @return the registered methods, in the order they were added (read-only) */
    public java.util.Collection<Entry> entries() {
        return java.util.Collections.unmodifiableCollection(entries.values());
    }

    /** @return number of methods */
    public int size() {
        return entries.size();
    }

    private static int mix(int h) {
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
