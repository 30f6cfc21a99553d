package dev.rdmarpc.rpc.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A pool of fixed-size native buffers ("chunks") carved from large slabs, plus a large-buffer path
 * for frames bigger than a chunk.
 *
 * <p>Chunks: the pool grows one slab at a time (each slab is {@link Config#slabSize} bytes from an
 * {@link Arena} the pool owns), up to {@link Config#maxPooledBytes}; slabs are kept until the pool
 * closes, so a transport registers each slab once. Large buffers (over {@link #chunkSize()} bytes)
 * get a slab of their own, rounded up to a power of two, cached a little after release and bounded
 * in total by {@link Config#maxLargeBytes}.
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
    private static final int LARGE_CACHE = 4;

    private final Config config;
    private final int chunkSize;
    private final long maxSlabs;
    private final List<Slab> slabs = new ArrayList<>();
    private final PooledBuffer[] largeCache = new PooledBuffer[LARGE_CACHE];
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
    private boolean closed;

    private BufferPool(Config config) {
        this.config = config;
        this.chunkSize = config.chunkSize;
        this.maxSlabs = config.maxPooledBytes / config.slabSize;
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

    private PooledBuffer acquireLarge(int minCapacity) {
        long size = Long.highestOneBit(minCapacity - 1L) << 1;
        synchronized (this) {
            ensureOpen();
            for (int i = 0; i < LARGE_CACHE; i++) {
                PooledBuffer b = largeCache[i];
                if (b != null && b.capacity() >= minCapacity && b.capacity() <= 2L * size) {
                    largeCache[i] = null;
                    acquires++;
                    b.inUse = true;
                    largeInUse++;
                    largeBytesInUse += b.capacity();
                    return b;
                }
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
            largeInUse++;
            largeBytesInUse += size;
            largeAllocations++;
            return b;
        }
    }

    private boolean dropOneCachedLarge() {
        for (int i = 0; i < LARGE_CACHE; i++) {
            PooledBuffer b = largeCache[i];
            if (b != null) {
                largeCache[i] = null;
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
                for (int i = 0; i < LARGE_CACHE; i++) {
                    if (largeCache[i] == null) {
                        largeCache[i] = b;
                        return;
                    }
                }
                largeBytesAllocated -= b.capacity();
                freeSlab(b.slab());
                return;
            }
            chunksInUse--;
            b.nextFree = freeList;
            freeList = b;
        }
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

    /** @return large buffers allocated from the system so far (cache misses) */
    public synchronized long largeAllocations() {
        return largeAllocations;
    }

    /** @return native bytes held by the pool: chunk slabs plus large buffers in use or cached */
    public synchronized long reservedBytes() {
        return (long) slabs.size() * config.slabSize + largeBytesAllocated;
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
            for (int i = 0; i < LARGE_CACHE; i++) {
                if (largeCache[i] != null) {
                    toFree.add(largeCache[i].slab());
                    largeCache[i] = null;
                }
            }
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
     */
    public static final class Config {
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

        private int chunkSize = DEFAULT_CHUNK_SIZE;
        private long slabSize = DEFAULT_SLAB_SIZE;
        private long maxPooledBytes = DEFAULT_MAX_POOLED_BYTES;
        private long maxLargeBytes = DEFAULT_MAX_LARGE_BYTES;
        private long alignment = DEFAULT_ALIGNMENT;
        private SlabListener slabListener = SlabListener.NONE;

        /** Creates a configuration with the defaults. */
        public Config() {
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
         * @param listener told about every slab created and freed; default {@link SlabListener#NONE}
         * @return this
         */
        public Config slabListener(SlabListener listener) {
            this.slabListener = Objects.requireNonNull(listener, "listener");
            return this;
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
            return this;
        }

        Config copy() {
            return new Config().chunkSize(chunkSize).slabSize(slabSize).maxPooledBytes(maxPooledBytes)
                    .maxLargeBytes(maxLargeBytes).alignment(alignment).slabListener(slabListener);
        }
    }
}
