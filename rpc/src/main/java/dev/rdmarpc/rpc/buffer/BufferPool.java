package dev.rdmarpc.rpc.buffer;

import dev.rdmarpc.rpc.settings.SettingsTable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A pool of fixed-size native buffers ("chunks") carved from large slabs, plus a large-buffer path
 * for frames bigger than a chunk.
 *
 * <p>Chunks: the pool grows one slab at a time (each slab is {@link Config#slabSize} bytes from an
 * {@link Arena} the pool owns), up to {@link Config#maxPooledBytes}. Large buffers (over
 * {@link #chunkSize()} bytes) get a slab of their own, rounded up to the next eighth of a power of two
 * (at most 12.5% more than asked, 9 MiB for an 8 MiB frame and its header), cached a little after
 * release and bounded in total by {@link Config#maxLargeBytes}.
 *
 * <p>Memory goes back to the system once it has been idle for {@link Config#idleRelease} (default
 * {@value Config#DEFAULT_IDLE_RELEASE_SECONDS} s): {@link #trim} frees cached large buffers released
 * that long ago and chunk slabs none of whose chunks has been in use for that long, keeping the first
 * slab. The transports call {@link #trim} from their I/O threads' ticks, so a burst's memory is given
 * back within about a second of the idle time passing; a transport registers a slab once for as long
 * as the pool keeps it.
 *
 * <p>Exhaustion is an expected condition, not an exception: {@link #acquire()} and
 * {@link #acquire(int)} return {@code null}, and {@link #acquireFailures()} counts it. The RPC layer
 * turns that into {@code Status.RESOURCE_EXHAUSTED}.
 *
 * <p>Thread-safety: every method may be called from any thread. Acquiring and releasing a chunk does
 * not allocate on the heap once the pool has grown to its working size.
 *
 * <p>Ownership: the creator of the pool closes it; closing tells the {@link SlabListener} about each
 * slab and then frees it. Buffers still held at close become invalid.
 */
public final class BufferPool implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(BufferPool.class.getName());
    /** Size classes of large buffers: eight per power of two, up to 2^31. */
    private static final int LARGE_CLASSES = 32 * 8;
    private static final long TRIM_PERIOD_NANOS = 1_000_000_000L;

    private final Config config;
    private final int chunkSize;
    private final long maxSlabs;
    private final List<Slab> slabs = new ArrayList<>();
    /**
     * Released large buffers kept for reuse, one stack per size class (linked through
     * {@link PooledBuffer#nextFree}, newest first). They count against {@link Config#maxLargeBytes}
     * and are freed when a new buffer needs the room, or by {@link #trim} once idle.
     */
    private final PooledBuffer[] largeFree = new PooledBuffer[LARGE_CLASSES];
    private int largeCached;
    private final long idleReleaseNanos;
    /** When {@link #trim} last looked (it looks at most once per {@link #TRIM_PERIOD_NANOS}). */
    private volatile long lastTrimNanos = System.nanoTime();
    private long trimmedBytes;
    private PooledBuffer freeList;
    private int chunksTotal;
    private int chunksInUse;
    private int highWaterMark;
    private long acquires;
    private long acquireFailures;
    private int largeInUse;
    private long largeBytesInUse;
    private long largeBytesAllocated;
    private long largeAllocations;
    private long largeAcquires;
    private boolean closed;

    private BufferPool(Config config) {
        this.config = config;
        this.chunkSize = config.chunkSize;
        this.maxSlabs = config.maxPooledBytes / config.slabSize;
        this.idleReleaseNanos = config.idleRelease.toNanos();
    }

    /**
     * Creates a pool. No memory is allocated until the first acquisition.
     *
     * @param config the settings; validated here ({@link Config#conclude()})
     * @return a new pool the caller owns
     */
    public static BufferPool create(Config config) {
        return new BufferPool(config.copy().conclude());
    }

    /** @return a pool with the default {@link Config} */
    public static BufferPool create() {
        return create(new Config());
    }

    /** @return the size of one chunk in bytes */
    public int chunkSize() {
        return chunkSize;
    }

    /** @return the (validated) configuration of this pool */
    public Config config() {
        return config.copy();
    }

    /**
     * Takes one chunk of {@link #chunkSize()} bytes.
     *
     * @return the chunk, or null when the pool has reached {@link Config#maxPooledBytes}
     * @throws IllegalStateException when the pool is closed
     */
    public PooledBuffer acquire() {
        Slab created = null;
        synchronized (this) {
            ensureOpen();
            PooledBuffer b = freeList;
            if (b != null) {
                return takeChunk(b);
            }
            if (slabs.size() >= maxSlabs) {
                acquireFailures++;
                return null;
            }
        }
        // Grow outside the lock: allocation and the listener (device registration) can be slow.
        try {
            created = newSlab(config.slabSize, false);
        } catch (RuntimeException | OutOfMemoryError e) {
            LOG.log(System.Logger.Level.WARNING, "buffer pool could not add a slab", e);
            synchronized (this) {
                acquireFailures++;
            }
            return null;
        }
        synchronized (this) {
            if (closed || slabs.size() >= maxSlabs) {
                acquireFailures++;
                freeSlab(created);
                ensureOpen();
                return null;
            }
            slabs.add(created);
            long n = config.slabSize / chunkSize;
            for (long i = n - 1; i >= 0; i--) {
                PooledBuffer c = new PooledBuffer(this, created, created.segment().asSlice(i * chunkSize, chunkSize));
                c.nextFree = freeList;
                freeList = c;
            }
            chunksTotal += (int) n;
            return takeChunk(freeList);
        }
    }

    /**
     * Takes a buffer of at least {@code minCapacity} bytes: a chunk when it fits in one, a large
     * buffer otherwise.
     *
     * @param minCapacity bytes needed, at least 0
     * @return the buffer, or null when the pool (or its large-buffer budget) is exhausted
     * @throws IllegalStateException when the pool is closed
     */
    public PooledBuffer acquire(int minCapacity) {
        if (minCapacity < 0) {
            throw new IllegalArgumentException("negative capacity " + minCapacity);
        }
        if (minCapacity <= chunkSize) {
            return acquire();
        }
        return acquireLarge(minCapacity);
    }

    /**
     * The size class of a large buffer: {@code minCapacity} rounded up to the next eighth of its
     * power of two, and to the alignment.
     */
    static long largeSize(int minCapacity, long alignment) {
        long step = Math.max(Long.highestOneBit(minCapacity - 1L) >> 3, alignment);
        return (minCapacity + step - 1) / step * step;
    }

    private PooledBuffer acquireLarge(int minCapacity) {
        long size = largeSize(minCapacity, config.alignment);
        int sizeClass = sizeClass(size);
        synchronized (this) {
            ensureOpen();
            PooledBuffer cached = largeFree[sizeClass];
            if (cached != null && cached.capacity() >= minCapacity) {
                largeFree[sizeClass] = cached.nextFree;
                cached.nextFree = null;
                largeCached--;
                acquires++;
                largeAcquires++;
                cached.inUse = true;
                largeInUse++;
                largeBytesInUse += cached.capacity();
                return cached;
            }
            // Make room: cached buffers count against the budget, so drop them first.
            while (largeBytesAllocated + size > config.maxLargeBytes && dropOneCachedLarge()) {
                // keep dropping
            }
            if (largeBytesAllocated + size > config.maxLargeBytes) {
                acquireFailures++;
                return null;
            }
            largeBytesAllocated += size;
        }
        Slab slab;
        try {
            slab = newSlab(size, true);
        } catch (RuntimeException | OutOfMemoryError e) {
            LOG.log(System.Logger.Level.WARNING, "buffer pool could not allocate a large buffer", e);
            synchronized (this) {
                largeBytesAllocated -= size;
                acquireFailures++;
            }
            return null;
        }
        synchronized (this) {
            if (closed) {
                freeSlab(slab);
                ensureOpen();
            }
            PooledBuffer b = new PooledBuffer(this, slab, slab.segment());
            b.inUse = true;
            acquires++;
            largeAcquires++;
            largeInUse++;
            largeBytesInUse += size;
            largeAllocations++;
            return b;
        }
    }

    /** The free-list index of a large buffer of {@code size} bytes: its power of two and eighth. */
    private static int sizeClass(long size) {
        int log = 63 - Long.numberOfLeadingZeros(size - 1);
        return Math.min(LARGE_CLASSES - 1, log * 8 + (int) (((size - 1) >> (log - 3)) & 7));
    }

    /** Frees one cached large buffer, the largest first; false when none is cached. Under the lock. */
    private boolean dropOneCachedLarge() {
        for (int c = LARGE_CLASSES - 1; c >= 0 && largeCached > 0; c--) {
            PooledBuffer b = largeFree[c];
            if (b != null) {
                largeFree[c] = b.nextFree;
                b.nextFree = null;
                largeCached--;
                largeBytesAllocated -= b.capacity();
                freeSlab(b.slab());
                return true;
            }
        }
        return false;
    }

    private PooledBuffer takeChunk(PooledBuffer b) {
        freeList = b.nextFree;
        b.nextFree = null;
        b.inUse = true;
        b.slab().chunksInUse++;
        acquires++;
        if (++chunksInUse > highWaterMark) {
            highWaterMark = chunksInUse;
        }
        return b;
    }

    void release(PooledBuffer b) {
        synchronized (this) {
            if (!b.inUse) {
                throw new IllegalStateException("buffer released twice");
            }
            b.inUse = false;
            if (closed) {
                return;
            }
            if (b.isLarge()) {
                largeInUse--;
                largeBytesInUse -= b.capacity();
                int c = sizeClass(b.capacity());
                b.releasedAtNanos = System.nanoTime();
                b.nextFree = largeFree[c];
                largeFree[c] = b;
                largeCached++;
                return;
            }
            chunksInUse--;
            Slab slab = b.slab();
            if (--slab.chunksInUse == 0) {
                slab.idleSinceNanos = System.nanoTime();
            }
            b.nextFree = freeList;
            freeList = b;
        }
    }

    /**
     * Gives memory idle for {@link Config#idleRelease} back to the system: cached large buffers
     * released at least that long ago, and chunk slabs (all but the first) none of whose chunks has
     * been in use for that long. Cheap when there is nothing to do: it looks at most once a second.
     * Any thread; the transports call it from their I/O threads' ticks.
     *
     * @param nowNanos {@link System#nanoTime()}
     * @return bytes freed by this call
     */
    public long trim(long nowNanos) {
        if (nowNanos - lastTrimNanos < TRIM_PERIOD_NANOS) {
            return 0;
        }
        List<Slab> toFree = null;
        long freed = 0;
        synchronized (this) {
            if (closed || nowNanos - lastTrimNanos < TRIM_PERIOD_NANOS) {
                return 0;
            }
            lastTrimNanos = nowNanos;
            for (int c = 0; c < LARGE_CLASSES && largeCached > 0; c++) {
                PooledBuffer prev = null;
                for (PooledBuffer b = largeFree[c]; b != null; ) {
                    PooledBuffer next = b.nextFree;
                    if (nowNanos - b.releasedAtNanos >= idleReleaseNanos) {
                        if (prev == null) {
                            largeFree[c] = next;
                        } else {
                            prev.nextFree = next;
                        }
                        b.nextFree = null;
                        largeCached--;
                        largeBytesAllocated -= b.capacity();
                        freed += b.capacity();
                        toFree = add(toFree, b.slab());
                    } else {
                        prev = b;
                    }
                    b = next;
                }
            }
            boolean retiring = false;
            for (int i = slabs.size() - 1; i >= 1; i--) {
                Slab slab = slabs.get(i);
                if (slab.chunksInUse == 0 && nowNanos - slab.idleSinceNanos >= idleReleaseNanos) {
                    slabs.remove(i);
                    slab.retired = true;
                    toFree = add(toFree, slab);
                    retiring = true;
                }
            }
            if (retiring) {
                // unlink the retired slabs' chunks from the free list (all of their chunks are on it)
                PooledBuffer kept = null;
                PooledBuffer keptTail = null;
                for (PooledBuffer b = freeList; b != null; ) {
                    PooledBuffer next = b.nextFree;
                    b.nextFree = null;
                    if (!b.slab().retired) {
                        if (keptTail == null) {
                            kept = b;
                        } else {
                            keptTail.nextFree = b;
                        }
                        keptTail = b;
                    } else {
                        chunksTotal--;
                    }
                    b = next;
                }
                freeList = kept;
            }
        }
        if (toFree != null) {
            for (Slab slab : toFree) {
                if (!slab.isLarge()) {
                    freed += slab.byteSize();
                }
                freeSlab(slab);
            }
            synchronized (this) {
                trimmedBytes += freed;
            }
        }
        return freed;
    }

    private static List<Slab> add(List<Slab> list, Slab slab) {
        List<Slab> l = list == null ? new ArrayList<>() : list;
        l.add(slab);
        return l;
    }

    private Slab newSlab(long size, boolean large) {
        Arena arena = Arena.ofShared();
        Slab slab;
        try {
            MemorySegment seg = arena.allocate(size, config.alignment);
            slab = new Slab(arena, seg, large);
        } catch (RuntimeException | OutOfMemoryError e) {
            arena.close();
            throw e;
        }
        try {
            config.slabListener.slabCreated(slab);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        return slab;
    }

    private void freeSlab(Slab slab) {
        try {
            config.slabListener.slabFreed(slab);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "slab listener failed while freeing a slab", e);
        } finally {
            slab.free();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("buffer pool is closed");
        }
    }

    /** @return chunks currently handed out */
    public synchronized int chunksInUse() {
        return chunksInUse;
    }

    /** @return chunks carved so far (in use or free) */
    public synchronized int chunksTotal() {
        return chunksTotal;
    }

    /** @return the most chunks ever in use at once */
    public synchronized int highWaterMark() {
        return highWaterMark;
    }

    /** @return successful acquisitions (chunks and large buffers) */
    public synchronized long acquires() {
        return acquires;
    }

    /** @return acquisitions that returned null because the pool was exhausted */
    public synchronized long acquireFailures() {
        return acquireFailures;
    }

    /** @return number of chunk slabs allocated */
    public synchronized int slabCount() {
        return slabs.size();
    }

    /** @return large buffers currently handed out */
    public synchronized int largeBuffersInUse() {
        return largeInUse;
    }

    /** @return bytes of large buffers currently handed out */
    public synchronized long largeBytesInUse() {
        return largeBytesInUse;
    }

    /** @return large buffers handed out so far, from the cache or newly allocated */
    public synchronized long largeAcquires() {
        return largeAcquires;
    }

    /** @return large buffers allocated from the system so far (cache misses) */
    public synchronized long largeAllocations() {
        return largeAllocations;
    }

    /** @return native bytes held by the pool: chunk slabs plus large buffers in use or cached */
    public synchronized long reservedBytes() {
        return (long) slabs.size() * config.slabSize + largeBytesAllocated;
    }

    /** @return bytes given back to the system by {@link #trim} so far */
    public synchronized long trimmedBytes() {
        return trimmedBytes;
    }

    /** @return true once {@link #close()} has run */
    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Frees every slab (telling the listener first). Idempotent. Buffers still held become invalid;
     * their later {@link PooledBuffer#release()} is ignored.
     */
    @Override
    public void close() {
        List<Slab> toFree = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (int c = 0; c < LARGE_CLASSES; c++) {
                for (PooledBuffer b = largeFree[c]; b != null; b = b.nextFree) {
                    toFree.add(b.slab());
                }
                largeFree[c] = null;
            }
            largeCached = 0;
            for (int i = slabs.size() - 1; i >= 0; i--) {
                toFree.add(slabs.get(i));
            }
            slabs.clear();
            freeList = null;
        }
        for (Slab s : toFree) {
            freeSlab(s);
        }
    }

    @Override
    public String toString() {
        synchronized (this) {
            return "BufferPool[chunk=" + chunkSize + ", chunks " + chunksInUse + "/" + chunksTotal
                    + ", hwm=" + highWaterMark + ", slabs=" + slabs.size() + ", large=" + largeInUse
                    + ", failures=" + acquireFailures + "]";
        }
    }

    /**
     * Settings of a {@link BufferPool}, with fluent setters and documented defaults; validated once by
     * {@link #conclude()} (which {@link BufferPool#create(Config)} calls).
     *
     * <p>Every setting but the slab listener takes its default from the system property
     * {@code rdmarpc.pool.<setting>} when that is set ({@code -Drdmarpc.pool.chunkSize=128K},
     * {@code -Drdmarpc.pool.idleRelease=30s}; byte counts take K, M, G; durations ns, us, ms, s).
     * The RDMA transport's pool reads {@code rdmarpc.rdma.bufferPool.<setting>} instead, with RDMA's
     * defaults (see {@code RdmaConfig.bufferPool}).
     */
    public static final class Config {
        private static final SettingsTable<Config> SETTINGS = new SettingsTable<Config>("BufferPool.Config", "rdmarpc.pool.")
                .add("chunkSize", SettingsTable::parseIntBytes, Config::chunkSize, Config::chunkSize)
                .add("slabSize", SettingsTable::parseBytes, Config::slabSize, Config::slabSize)
                .add("maxPooledBytes", SettingsTable::parseBytes, Config::maxPooledBytes, Config::maxPooledBytes)
                .add("maxLargeBytes", SettingsTable::parseBytes, Config::maxLargeBytes, Config::maxLargeBytes)
                .add("alignment", SettingsTable::parseBytes, Config::alignment, Config::alignment)
                .add("slabListener", null, Config::slabListener, Config::slabListener)
                .add("idleRelease", SettingsTable::parseDuration, Config::idleRelease, Config::idleRelease);

        /** Default chunk size: 64 KiB. */
        public static final int DEFAULT_CHUNK_SIZE = 64 * 1024;
        /** Default slab size: 4 MiB (64 default chunks). */
        public static final long DEFAULT_SLAB_SIZE = 4L * 1024 * 1024;
        /** Default bound on chunk slabs: 512 MiB. */
        public static final long DEFAULT_MAX_POOLED_BYTES = 512L * 1024 * 1024;
        /** Default bound on large buffers: 512 MiB. */
        public static final long DEFAULT_MAX_LARGE_BYTES = 512L * 1024 * 1024;
        /** Default alignment of slabs: 4096 (a page, what device registration prefers). */
        public static final long DEFAULT_ALIGNMENT = 4096;
        /** Default idle time after which unused memory goes back to the system: 10 s. */
        public static final int DEFAULT_IDLE_RELEASE_SECONDS = 10;

        private int chunkSize = DEFAULT_CHUNK_SIZE;
        private long slabSize = DEFAULT_SLAB_SIZE;
        private long maxPooledBytes = DEFAULT_MAX_POOLED_BYTES;
        private long maxLargeBytes = DEFAULT_MAX_LARGE_BYTES;
        private long alignment = DEFAULT_ALIGNMENT;
        private SlabListener slabListener = SlabListener.NONE;
        private Duration idleRelease = Duration.ofSeconds(DEFAULT_IDLE_RELEASE_SECONDS);

        /** Creates a configuration with the defaults (the system properties' where set). */
        public Config() {
            SETTINGS.applySystemProperties(this);
        }

        private Config(boolean systemProperties) {
            if (systemProperties) {
                SETTINGS.applySystemProperties(this);
            }
        }

        /**
         * @return a configuration with the built-in defaults only, not those of the
         *         {@code rdmarpc.pool.*} system properties: for a pool whose owner reads properties of
         *         its own (the RDMA transport's pool reads {@code rdmarpc.rdma.bufferPool.*})
         */
        public static Config builtInDefaults() {
            return new Config(false);
        }

        /** @return the system properties that give this class its defaults */
        public static java.util.List<String> systemProperties() {
            return SETTINGS.properties();
        }

        /**
         * @return the table of this class's settings, for a configuration class of this module that
         *         holds a pool's settings as a group of its own (the RDMA transport's); its package is
         *         not exported
         */
        public static SettingsTable<Config> settingsTable() {
            return SETTINGS;
        }

        /**
         * @param bytes size of one chunk, a power of two from 1 KiB to 64 MiB; default 64 KiB
         * @return this
         */
        public Config chunkSize(int bytes) {
            this.chunkSize = bytes;
            return this;
        }

        /**
         * @param bytes size of one slab, a multiple of the chunk size; default 4 MiB
         * @return this
         */
        public Config slabSize(long bytes) {
            this.slabSize = bytes;
            return this;
        }

        /**
         * @param bytes most bytes of chunk slabs the pool may allocate; default 512 MiB
         * @return this
         */
        public Config maxPooledBytes(long bytes) {
            this.maxPooledBytes = bytes;
            return this;
        }

        /**
         * @param bytes most bytes of large buffers (allocated or cached) at once; default 512 MiB
         * @return this
         */
        public Config maxLargeBytes(long bytes) {
            this.maxLargeBytes = bytes;
            return this;
        }

        /**
         * @param bytes alignment of every slab, a power of two; default 4096
         * @return this
         */
        public Config alignment(long bytes) {
            this.alignment = bytes;
            return this;
        }

        /**
         * @param listener told about every slab created and freed; default {@link SlabListener#NONE}.
         *                 In the RDMA transport's pool it is called after the transport has registered
         *                 a new slab and before it deregisters one
         * @return this
         */
        public Config slabListener(SlabListener listener) {
            this.slabListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * @param idle how long memory stays unused before {@link BufferPool#trim} gives it back to the
         *             system (cached large buffers, free chunk slabs but the first); default 10 s.
         *             Longer keeps bursts' buffers (and their RDMA registrations) for the next burst;
         *             shorter gives memory back sooner.
         * @return this
         */
        public Config idleRelease(Duration idle) {
            this.idleRelease = Objects.requireNonNull(idle, "idle");
            return this;
        }

        /** @return the idle time after which unused memory is given back */
        public Duration idleRelease() {
            return idleRelease;
        }

        /** @return the chunk size */
        public int chunkSize() {
            return chunkSize;
        }

        /** @return the slab size */
        public long slabSize() {
            return slabSize;
        }

        /** @return the chunk-slab budget */
        public long maxPooledBytes() {
            return maxPooledBytes;
        }

        /** @return the large-buffer budget */
        public long maxLargeBytes() {
            return maxLargeBytes;
        }

        /** @return the slab alignment */
        public long alignment() {
            return alignment;
        }

        /** @return the slab listener */
        public SlabListener slabListener() {
            return slabListener;
        }

        /**
         * Validates the settings.
         *
         * @return this
         * @throws IllegalArgumentException naming the first bad setting
         */
        public Config conclude() {
            if (chunkSize < 1024 || chunkSize > (64 << 20) || Integer.bitCount(chunkSize) != 1) {
                throw new IllegalArgumentException("chunkSize must be a power of two in [1 KiB, 64 MiB]: " + chunkSize);
            }
            if (slabSize < chunkSize || slabSize % chunkSize != 0) {
                throw new IllegalArgumentException("slabSize must be a positive multiple of chunkSize: " + slabSize);
            }
            if (maxPooledBytes < slabSize) {
                throw new IllegalArgumentException("maxPooledBytes must hold at least one slab: " + maxPooledBytes);
            }
            if (maxLargeBytes < 0) {
                throw new IllegalArgumentException("maxLargeBytes must not be negative: " + maxLargeBytes);
            }
            if (alignment < 1 || Long.bitCount(alignment) != 1) {
                throw new IllegalArgumentException("alignment must be a power of two: " + alignment);
            }
            if (idleRelease.isNegative() || idleRelease.toDays() > 365) {
                throw new IllegalArgumentException("idleRelease must be in [0, 365 days]: " + idleRelease);
            }
            return this;
        }

        /** @return an independent copy */
        public Config copy() {
            Config c = new Config(false);
            SETTINGS.copy(this, c);
            return c;
        }

        @Override
        public String toString() {
            return SETTINGS.toString(this);
        }
    }
}
