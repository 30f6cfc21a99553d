package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.cuda.CudaContext;
import dev.rdmarpc.cuda.DeviceBuffer;
import dev.rdmarpc.cuda.DmaBuf;
import dev.rdmarpc.cuda.PinnedHostMemory;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * GPU attachment buffers registered with one NIC, for the RDMA transport. The seam between the RDMA
 * transport and GPU memory: the transport gives its protection domain (a {@link NicRegistrar}), the
 * pool gives it {@link GpuBuffer}s the NIC can reach, and it puts an attachment in one with two SGEs
 * ({@link GpuBuffer#writeSges}): headers and payload stay in host memory, only the attachment is on
 * the GPU.
 *
 * <p>The pool allocates GPU memory in slabs of {@link Config#slabSize} bytes, carved into buffers of
 * {@link Config#bufferSize}. Creating the pool allocates the first slab and registers it with
 * {@link GpuDirectSelector}: dma-buf, else peer-memory, else staged (pinned host memory registered
 * with the NIC paired with every GPU buffer, and a warning in the log). That {@link #decision()} holds
 * for every later slab. Slabs are kept until the pool closes, so memory is registered once.
 *
 * <p>Exhaustion is expected: {@link #acquire()} returns null when {@link Config#maxSlabs} slabs are in
 * use. Thread-safe. Ownership: the creator closes the pool, after the NIC stopped using its memory:
 * each region is deregistered first, then its memory is freed.
 */
public final class GpuBufferPool implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GpuBufferPool.class.getName());

    /** {@code IBV_ACCESS_LOCAL_WRITE}. */
    public static final int ACCESS_LOCAL_WRITE = 1;
    /** {@code IBV_ACCESS_REMOTE_WRITE}. */
    public static final int ACCESS_REMOTE_WRITE = 1 << 1;
    /** {@code IBV_ACCESS_REMOTE_READ}. */
    public static final int ACCESS_REMOTE_READ = 1 << 2;

    /**
     * Where the pool's memory comes from: device memory of one GPU, pinned host memory, dma-buf
     * exports. {@link #cudaMemory(CudaContext)} is the real one.
     */
    public interface MemorySource {
        /** @return the GPU's facts */
        GpuFacts facts();

        /** @return the address of {@code bytes} of device memory, aligned to the host page size */
        long allocateDevice(long bytes);

        /** Frees what {@link #allocateDevice} returned. */
        void freeDevice(long address);

        /** @return {@code bytes} of pinned host memory */
        MemorySegment allocatePinnedHost(long bytes);

        /** Frees what {@link #allocatePinnedHost} returned. */
        void freePinnedHost(MemorySegment memory);

        /** Exports device memory as a dma-buf. */
        GpuDirectSelector.ExportedDmaBuf exportDmaBuf(long address, long length);
    }

    private final MemorySource memory;
    private final NicRegistrar nic;
    private final Config config;
    private final System.Logger log;
    private final GpuDirectDecision decision;
    private final List<Slab> slabs = new ArrayList<>();
    private final ArrayDeque<GpuBuffer> free = new ArrayDeque<>();
    private int inUse;
    private boolean closed;

    private GpuBufferPool(MemorySource memory, NicRegistrar nic, Config config, System.Logger log) {
        this.memory = memory;
        this.nic = nic;
        this.config = config;
        this.log = log;
        long device = memory.allocateDevice(config.slabSize);
        GpuDirectSelector.Selection s;
        try {
            s = GpuDirectSelector.select(memory.facts(), device, config.slabSize, config.access,
                    memory::exportDmaBuf, nic, log);
        } catch (RuntimeException e) {
            memory.freeDevice(device);
            throw e;
        }
        this.decision = s.decision();
        log.log(System.Logger.Level.INFO, "GPU buffer pool: {0}", decision.describe());
        try {
            addSlab(device, s.registration());
        } catch (RuntimeException e) {
            if (s.registration() != null) {
                s.registration().close();
            }
            memory.freeDevice(device);
            throw e;
        }
    }

    /**
     * A pool of GPU memory from {@code memory}, registered with {@code nic}. Allocates and registers
     * the first slab now.
     *
     * @param memory where memory comes from
     * @param nic    the NIC (protection domain) to register with
     * @param config settings, validated here
     * @return the pool, owned by the caller
     */
    public static GpuBufferPool create(MemorySource memory, NicRegistrar nic, Config config) {
        return create(memory, nic, config, LOG);
    }

    static GpuBufferPool create(MemorySource memory, NicRegistrar nic, Config config, System.Logger log) {
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(nic, "nic");
        return new GpuBufferPool(memory, nic, config.copy().conclude(), log);
    }

    /** @return how the NIC reaches this pool's GPU memory, and why */
    public GpuDirectDecision decision() {
        return decision;
    }

    /** @return the GPU's ordinal */
    public int deviceOrdinal() {
        return decision.deviceOrdinal();
    }

    /** @return the size of each buffer */
    public int bufferSize() {
        return config.bufferSize;
    }

    /**
     * Takes a buffer, growing by a slab when none is free.
     *
     * @return a buffer, or null when {@link Config#maxSlabs} slabs are in use or a new slab cannot be
     *         allocated or registered (logged)
     * @throws IllegalStateException when the pool is closed
     */
    public synchronized GpuBuffer acquire() {
        ensureOpen();
        GpuBuffer b = free.poll();
        if (b == null) {
            if (slabs.size() >= config.maxSlabs) {
                return null;
            }
            try {
                grow();
            } catch (RuntimeException e) {
                log.log(System.Logger.Level.WARNING, "GPU buffer pool could not add a slab", e);
                return null;
            }
            b = free.poll();
        }
        b.inUse = true;
        inUse++;
        return b;
    }

    synchronized void release(GpuBuffer b) {
        if (!b.inUse) {
            throw new IllegalStateException("GPU buffer released twice: " + b);
        }
        b.inUse = false;
        inUse--;
        if (!closed) {
            free.push(b);
        }
    }

    /** @return buffers acquired and not released */
    public synchronized int buffersInUse() {
        return inUse;
    }

    /** @return slabs allocated so far */
    public synchronized int slabCount() {
        return slabs.size();
    }

    private void grow() {
        long device = memory.allocateDevice(config.slabSize);
        NicRegistrar.Registration r = null;
        try {
            switch (decision.mode()) {
                case DMABUF -> {
                    try (GpuDirectSelector.ExportedDmaBuf fd = memory.exportDmaBuf(device, config.slabSize)) {
                        r = nic.registerDmaBuf(fd.fd(), 0, config.slabSize, device, config.access);
                    }
                }
                case PEER_MEMORY -> r = nic.registerMemory(device, config.slabSize, config.access);
                case STAGED -> r = null;
            }
            addSlab(device, r);
        } catch (RuntimeException e) {
            if (r != null) {
                r.close();
            }
            memory.freeDevice(device);
            throw e;
        }
    }

    /** Adds a slab whose device memory is registered ({@code r}) or, when staged, pairs it with registered host memory. */
    private void addSlab(long device, NicRegistrar.Registration deviceRegistration) {
        MemorySegment hostMemory = null;
        NicRegistrar.Registration hostRegistration = null;
        if (decision.mode() == GpuDirectMode.STAGED) {
            hostMemory = memory.allocatePinnedHost(config.slabSize);
            try {
                hostRegistration = nic.registerMemory(hostMemory.address(), config.slabSize, config.access);
            } catch (RuntimeException e) {
                memory.freePinnedHost(hostMemory);
                throw e;
            }
        }
        Slab slab = new Slab(device, deviceRegistration, hostMemory, hostRegistration);
        slabs.add(slab); // complete: from here on close() frees it (the caller frees what fails before)
        NicRegistrar.Registration keys = slab.deviceRegistration != null ? slab.deviceRegistration : slab.hostRegistration;
        int n = (int) (config.slabSize / config.bufferSize);
        for (int i = 0; i < n; i++) {
            long off = (long) i * config.bufferSize;
            MemorySegment host = slab.host == null ? MemorySegment.NULL : slab.host.asSlice(off, config.bufferSize);
            long nicAddress = slab.host == null ? device + off : slab.host.address() + off;
            free.add(new GpuBuffer(this, device + off, config.bufferSize, nicAddress, keys.lkey(), keys.rkey(), host));
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("GPU buffer pool is closed");
        }
    }

    /**
     * Deregisters every region and then frees its memory, newest slab first; once. Buffers still held
     * become invalid.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        free.clear();
        closeSlabs();
    }

    private void closeSlabs() {
        RuntimeException failure = null;
        for (int i = slabs.size() - 1; i >= 0; i--) {
            Slab s = slabs.get(i);
            try {
                if (s.hostRegistration != null) {
                    s.hostRegistration.close();
                }
                if (s.deviceRegistration != null) {
                    s.deviceRegistration.close();
                }
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
            try {
                if (s.host != null) {
                    memory.freePinnedHost(s.host);
                }
                memory.freeDevice(s.device);
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        slabs.clear();
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException addTo(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    @Override
    public String toString() {
        return "GpuBufferPool[" + decision.describe() + ", " + config.bufferSize + "-byte buffers]";
    }

    /** One slab: GPU memory and its registration, or (staged) the pinned host memory paired with it. */
    private static final class Slab {
        final long device;
        final NicRegistrar.Registration deviceRegistration;
        final MemorySegment host;
        final NicRegistrar.Registration hostRegistration;

        Slab(long device, NicRegistrar.Registration deviceRegistration, MemorySegment host,
             NicRegistrar.Registration hostRegistration) {
            this.device = device;
            this.deviceRegistration = deviceRegistration;
            this.host = host;
            this.hostRegistration = hostRegistration;
        }
    }

    // ================================================================ CUDA memory

    /**
     * The real {@link MemorySource}: device and pinned memory from {@code context} (which must stay
     * open while the pool is), dma-bufs from {@code cuMemGetHandleForAddressRange}.
     *
     * @param context the GPU's context
     * @return the memory source
     */
    public static MemorySource cudaMemory(CudaContext context) {
        return new CudaMemory(context);
    }

    private static final class CudaMemory implements MemorySource {
        private final CudaContext ctx;
        private final GpuFacts facts;
        private final Map<Long, DeviceBuffer> device = new HashMap<>();
        private final Map<Long, PinnedHostMemory> pinned = new HashMap<>();

        CudaMemory(CudaContext ctx) {
            this.ctx = ctx;
            this.facts = GpuFacts.of(ctx.device());
        }

        @Override
        public GpuFacts facts() {
            return facts;
        }

        @Override
        public synchronized long allocateDevice(long bytes) {
            long page = DmaBuf.PAGE_SIZE;
            DeviceBuffer b = ctx.allocate(bytes + page); // room to align up: dma-buf export needs page alignment
            long aligned = (b.address() + page - 1) & -page;
            device.put(aligned, b);
            return aligned;
        }

        @Override
        public synchronized void freeDevice(long address) {
            DeviceBuffer b = device.remove(address);
            if (b != null) {
                b.close();
            }
        }

        @Override
        public synchronized MemorySegment allocatePinnedHost(long bytes) {
            PinnedHostMemory p = ctx.allocatePinned(bytes);
            pinned.put(p.segment().address(), p);
            return p.segment();
        }

        @Override
        public synchronized void freePinnedHost(MemorySegment memory) {
            PinnedHostMemory p = pinned.remove(memory.address());
            if (p != null) {
                p.close();
            }
        }

        @Override
        public GpuDirectSelector.ExportedDmaBuf exportDmaBuf(long address, long length) {
            DmaBuf d = ctx.exportDmaBuf(address, length);
            return new GpuDirectSelector.ExportedDmaBuf() {
                @Override
                public int fd() {
                    return d.fd();
                }

                @Override
                public void close() {
                    d.close();
                }
            };
        }
    }

    // ================================================================ settings

    /** Settings of a {@link GpuBufferPool}; fluent, validated by {@link #conclude()}. */
    public static final class Config {
        private long slabSize = 64L << 20;
        private int bufferSize = 4 << 20;
        private int maxSlabs = 4;
        private int access = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

        /** @param bytes GPU memory per slab; default 64 MiB, a multiple of the buffer size and of 2 MiB @return this */
        public Config slabSize(long bytes) {
            this.slabSize = bytes;
            return this;
        }

        /** @param bytes size of each buffer (the largest attachment); default 4 MiB, a multiple of 4 KiB @return this */
        public Config bufferSize(int bytes) {
            this.bufferSize = bytes;
            return this;
        }

        /** @param n most slabs; default 4, at least 1 @return this */
        public Config maxSlabs(int n) {
            this.maxSlabs = n;
            return this;
        }

        /** @param flags {@code IBV_ACCESS_*} of the regions; default local write, remote write, remote read @return this */
        public Config access(int flags) {
            this.access = flags;
            return this;
        }

        Config copy() {
            Config c = new Config();
            c.slabSize = slabSize;
            c.bufferSize = bufferSize;
            c.maxSlabs = maxSlabs;
            c.access = access;
            return c;
        }

        /**
         * Validates the settings.
         *
         * @return this
         * @throws IllegalArgumentException naming the first bad setting
         */
        public Config conclude() {
            if (bufferSize < 4096 || bufferSize % 4096 != 0) {
                throw new IllegalArgumentException("bufferSize must be a positive multiple of 4 KiB: " + bufferSize);
            }
            if (slabSize < bufferSize || slabSize % bufferSize != 0 || slabSize % (2 << 20) != 0) {
                throw new IllegalArgumentException("slabSize must be a multiple of bufferSize (" + bufferSize
                        + ") and of 2 MiB: " + slabSize);
            }
            if (maxSlabs < 1) {
                throw new IllegalArgumentException("maxSlabs must be at least 1: " + maxSlabs);
            }
            if ((access & ACCESS_LOCAL_WRITE) == 0) {
                throw new IllegalArgumentException("access must include local write (receives land in the buffers)");
            }
            return this;
        }
    }
}
