package dev.rdmarpc.ibverbs.verbs;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of the native objects this layer has created and destroyed, per {@link ResourceKind},
 * readable from code: a leak test asserts {@link #live(ResourceKind)} returns to where it was.
 *
 * <p>A resource is counted when its native object has been created and uncounted when the native
 * object has been destroyed (a failed destroy leaves it counted). Counting does not touch
 * libibverbs, so these methods work everywhere. All methods are thread-safe; the counts are
 * JVM-wide.
 */
public final class VerbsResources {
    private static final ResourceKind[] KINDS = ResourceKind.values();
    private static final AtomicLongArray CREATED = new AtomicLongArray(KINDS.length);
    private static final AtomicLongArray DESTROYED = new AtomicLongArray(KINDS.length);

    private VerbsResources() {
    }

    /** How many resources of {@code kind} exist now (created and not yet destroyed). */
    public static long live(ResourceKind kind) {
        int i = kind.ordinal();
        // destroyed first: a concurrent create/destroy pair can only make the figure larger, never negative
        long destroyed = DESTROYED.get(i);
        return CREATED.get(i) - destroyed;
    }

    /** How many resources of every kind exist now. */
    public static long liveTotal() {
        long total = 0;
        for (ResourceKind kind : KINDS) {
            total += live(kind);
        }
        return total;
    }

    /** How many resources of {@code kind} were created since the JVM started. */
    public static long created(ResourceKind kind) {
        return CREATED.get(kind.ordinal());
    }

    /** How many resources of {@code kind} were destroyed since the JVM started. */
    public static long destroyed(ResourceKind kind) {
        return DESTROYED.get(kind.ordinal());
    }

    /** The live count of every kind, in declaration order. */
    public static Map<ResourceKind, Long> snapshot() {
        Map<ResourceKind, Long> map = new EnumMap<>(ResourceKind.class);
        for (ResourceKind kind : KINDS) {
            map.put(kind, live(kind));
        }
        return map;
    }

    static void onCreated(ResourceKind kind) {
        CREATED.incrementAndGet(kind.ordinal());
    }

    static void onDestroyed(ResourceKind kind) {
        DESTROYED.incrementAndGet(kind.ordinal());
    }
}
