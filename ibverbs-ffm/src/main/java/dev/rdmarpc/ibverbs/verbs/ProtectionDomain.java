package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsInline;
import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_mr;
import dev.rdmarpc.ibverbs.raw.ibv_pd;
import dev.rdmarpc.ibverbs.raw.ibv_qp_init_attr;
import dev.rdmarpc.ibverbs.raw.ibv_srq_attr;
import dev.rdmarpc.ibverbs.raw.ibv_srq_init_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions, memory windows, queue pairs and shared
 * receive queues of one domain may be used together, never across domains.
 *
 * <p>Depends on its {@link Context}; refuses to close while memory regions, memory windows, queue
 * pairs or shared receive queues made from it are open. Thread-safe: registering memory, allocating
 * windows and creating queues may run concurrently.
 */
public final class ProtectionDomain extends VerbsResource {
    private final Context context;
    private final MemorySegment pd;
    private final int handle;

    ProtectionDomain(Context context, MemorySegment pd) {
        super(ResourceKind.PROTECTION_DOMAIN, context);
        this.context = context;
        this.pd = pd.reinterpret(ibv_pd.sizeof());
        this.handle = ibv_pd.handle(this.pd);
    }

    /** The device this domain belongs to. */
    public Context context() {
        return context;
    }

    /** The native {@code struct ibv_pd *}. */
    public MemorySegment segment() {
        return pd;
    }

    /** {@link #register(MemorySegment, int)} with the access as a set. */
    public MemoryRegion register(MemorySegment memory, Set<Access> access) {
        return register(memory, Access.flags(access));
    }

    /**
     * Registers memory with the device ({@code ibv_reg_mr}): any native segment (from an arena,
     * a mapped file, huge pages). The memory must stay valid until the region is closed: close the
     * region first, then the arena that backs it.
     *
     * <p>Mapped files: since Linux 6.5 the kernel will not pin writable pages of a file that needs
     * dirty tracking (a file on a disk or network file system mapped {@code READ_WRITE}) for as long as
     * a registration lasts, and this fails with EFAULT when the access includes any write bit. Files
     * in tmpfs ({@code /dev/shm}) or hugetlbfs register with any access, and any mapping registers
     * read-only ({@link Access#REMOTE_READ} or no bits).
     *
     * <h4>Cost</h4>
     * Registration is a system call that pins every page of the range (get_user_pages: faults the
     * pages in and takes a reference on each) and builds the device's translation table (a page-table
     * walk, then on real hardware the table is written to the NIC), so it costs roughly linear time in
     * the number of pages plus a fixed syscall cost; deregistration unpins. It belongs at setup, not
     * on the data path: register large buffers once and carve them up (huge pages make the walk
     * 512 times shorter). {@code RegistrationCostTest} measures it in the Soft-RoCE VM.
     *
     * @param memory the memory; a heap segment cannot be registered
     * @param access {@link Access} bits
     * @throws IllegalArgumentException for a heap segment, an empty or dead one
     * @throws dev.rdmarpc.ibverbs.VerbsException when libibverbs refuses (ENOMEM: the locked-memory
     *                                             limit, {@code ulimit -l}; EINVAL: bad access bits;
     *                                             EFAULT: see mapped files above)
     */
    public MemoryRegion register(MemorySegment memory, int access) {
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered, not a heap segment");
        }
        if (memory.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        if (!memory.scope().isAlive()) {
            throw new IllegalArgumentException("the segment's arena is closed");
        }
        long length = memory.byteSize();
        return registered(() -> VerbsNative.ibv_reg_mr(pd, memory, length, access), memory, length, access);
    }

    /**
     * Registers memory the JVM cannot reach, by address ({@code ibv_reg_mr}): GPU memory that a
     * peer-memory kernel module ({@code nvidia_peermem}) lets the device pin, or host memory another
     * library allocated. The region's {@link MemoryRegion#memory()} is {@link MemorySegment#NULL}; the
     * memory must stay allocated until the region is closed.
     *
     * @param address the first byte
     * @param length  bytes, at least 1
     * @param access  {@link Access} bits
     * @throws IllegalArgumentException for address 0, a length below 1 or unknown access bits
     * @throws dev.rdmarpc.ibverbs.VerbsException when libibverbs refuses (EFAULT: the device cannot pin
     *                                             that memory, e.g. GPU memory without a peer-memory module)
     */
    public MemoryRegion registerAddress(long address, long length, int access) {
        if (address == 0 || length < 1) {
            throw new IllegalArgumentException("address 0x" + Long.toHexString(address) + ", length " + length);
        }
        return registered(() -> VerbsNative.ibv_reg_mr(pd, MemorySegment.ofAddress(address), length, access),
                MemorySegment.NULL, length, access);
    }

    /**
     * Registers memory exported as a dma-buf ({@code ibv_reg_dmabuf_mr}), the way a NIC reaches GPU
     * memory without a peer-memory module: {@code cuMemGetHandleForAddressRange} exports the GPU range
     * as a file descriptor, and the device maps it. The region's {@link MemoryRegion#memory()} is
     * {@link MemorySegment#NULL}; its {@link MemoryRegion#address()} is {@code iova}.
     *
     * @param offset where the region starts in the dma-buf
     * @param length bytes, at least 1
     * @param iova   the address work requests (and peers) use for the region's first byte, often the
     *               GPU's own address of it
     * @param fd     the dma-buf's file descriptor; the caller keeps it and may close it once this returns
     * @param access {@link Access} bits
     * @throws IllegalArgumentException for a negative offset or fd, a length below 1 or unknown access bits
     * @throws dev.rdmarpc.ibverbs.VerbsException when libibverbs refuses, with errno (EOPNOTSUPP: the
     *                                             provider has no dma-buf support, as Soft-RoCE; EBADF:
     *                                             no such dma-buf)
     */
    public MemoryRegion registerDmaBuf(long offset, long length, long iova, int fd, int access) {
        if (offset < 0 || length < 1 || fd < 0) {
            throw new IllegalArgumentException("offset " + offset + ", length " + length + ", fd " + fd);
        }
        return registered(() -> VerbsNative.ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access),
                MemorySegment.NULL, length, access);
    }

    /** One {@code ibv_reg_*} call, returning the {@code struct ibv_mr *}. */
    private interface RegistrationCall {
        MemorySegment register();
    }

    /** Validates the access bits, makes the registration while counting it as a dependent, and wraps it. */
    private MemoryRegion registered(RegistrationCall call, MemorySegment memory, long length, int access) {
        Access.of(access); // validates the bits
        acquire(this);
        try {
            MemorySegment mr = call.register();
            return new MemoryRegion(this, mr.reinterpret(ibv_mr.sizeof()), memory, length, access);
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    /**
     * Allocates a type-2 memory window ({@code ibv_alloc_mw(pd, IBV_MW_TYPE_2)}), unbound: its key
     * reaches nothing until a bind work request on a queue pair of this domain binds it to a region
     * registered with {@link Access#MW_BIND} (see {@link MemoryWindow}). It depends on this domain.
     *
     * @throws dev.rdmarpc.ibverbs.VerbsException when the provider refuses, with errno (EOPNOTSUPP: the
     *                                             provider has no memory windows)
     * @throws IllegalStateException               when this domain is closed
     */
    public MemoryWindow allocateMemoryWindow() {
        acquire(this);
        try {
            MemorySegment mw = VerbsInline.ibv_alloc_mw(pd, ibverbs_h.IBV_MW_TYPE_2());
            return new MemoryWindow(this, mw);
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    /**
     * Creates a queue pair ({@code ibv_create_qp}) in state RESET. It depends on this domain, its
     * completion queues and its shared receive queue.
     */
    public QueuePair createQueuePair(QueuePairInit init) {
        init.validate(this);
        CompletionQueue send = init.sendCompletionQueue();
        CompletionQueue recv = init.receiveCompletionQueue();
        SharedReceiveQueue srq = init.sharedReceiveQueue();
        acquire(this, send, recv == send ? null : recv, srq);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = init.toNative(arena);
            MemorySegment qp = VerbsNative.ibv_create_qp(pd, attr);
            // ibv_create_qp wrote the granted sizes back into attr->cap
            return new QueuePair(this, init, qp, QueuePairCapabilities.of(ibv_qp_init_attr.cap(attr)), null);
        } catch (RuntimeException | Error e) {
            release(this, send, recv == send ? null : recv, srq);
            throw e;
        }
    }

    /**
     * Adopts a queue pair created outside this layer on this domain, e.g. by {@code rdma_create_qp}:
     * the result behaves as one {@link #createQueuePair created} here (dependencies, counting,
     * posting), but is destroyed with {@code destroyer} (e.g. {@code rdma_destroy_qp}).
     *
     * @param init      the attributes the queue pair was created with (its completion queues, SRQ, type)
     * @param granted   the sizes the provider granted: what the creating call wrote back into its
     *                  {@code ibv_qp_init_attr.cap} ({@link QueuePairCapabilities#of}), which
     *                  {@link QueuePair#capabilities()} then reports
     * @param ibvQp     the native {@code struct ibv_qp *}
     * @param destroyer destroys it, returning 0 or an errno value
     */
    public QueuePair adoptQueuePair(QueuePairInit init, QueuePairCapabilities granted, MemorySegment ibvQp,
                                    QueuePair.Destroyer destroyer) {
        init.validate(this);
        if (ibvQp == null || ibvQp.address() == 0) {
            throw new IllegalArgumentException("ibv_qp is NULL");
        }
        if (destroyer == null) {
            throw new IllegalArgumentException("destroyer is null");
        }
        if (granted == null) {
            throw new IllegalArgumentException("granted capabilities are null");
        }
        CompletionQueue send = init.sendCompletionQueue();
        CompletionQueue recv = init.receiveCompletionQueue();
        SharedReceiveQueue srq = init.sharedReceiveQueue();
        acquire(this, send, recv == send ? null : recv, srq);
        try {
            return new QueuePair(this, init, MemorySegment.ofAddress(ibvQp.address()), granted, destroyer);
        } catch (RuntimeException | Error e) {
            release(this, send, recv == send ? null : recv, srq);
            throw e;
        }
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param maxWr  receive work requests it must hold
     * @param maxSge scatter entries per work request
     * @param limit  0, or the watermark below which an {@link AsyncEventType#SRQ_LIMIT_REACHED} event fires
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge, int limit) {
        if (maxWr < 1 || maxSge < 1 || limit < 0) {
            throw new IllegalArgumentException("maxWr and maxSge must be >= 1 and limit >= 0: " + maxWr + ", "
                    + maxSge + ", " + limit);
        }
        acquire(this);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = ibv_srq_init_attr.allocate(arena);
            MemorySegment attr = ibv_srq_init_attr.attr(init);
            ibv_srq_attr.max_wr(attr, maxWr);
            ibv_srq_attr.max_sge(attr, maxSge);
            ibv_srq_attr.srq_limit(attr, limit);
            MemorySegment srq = VerbsNative.ibv_create_srq(pd, init);
            return new SharedReceiveQueue(this, srq, ibv_srq_attr.max_wr(attr), ibv_srq_attr.max_sge(attr));
        } catch (RuntimeException | Error e) {
            release(this);
            throw e;
        }
    }

    @Override
    void destroy() {
        VerbsNative.check("ibv_dealloc_pd", ibverbs_h.ibv_dealloc_pd(pd));
    }

    @Override
    public String toString() {
        return "ProtectionDomain[" + context.name() + ", handle " + handle + "]";
    }
}
