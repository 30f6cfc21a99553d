package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.ibverbs.raw.ibv_mr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link NicRegistrar} over libibverbs for one protection domain: {@code ibv_reg_dmabuf_mr} and
 * {@code ibv_reg_mr}, deregistered with {@code ibv_dereg_mr}. The protection domain stays its
 * owner's (the RDMA transport) and must outlive every registration made here. Thread-safe.
 */
public final class VerbsNicRegistrar implements NicRegistrar {
    private final MemorySegment pd;
    private final String name;

    /**
     * @param pd   a {@code struct ibv_pd *}
     * @param name the device's name for logs ("mlx5_0", "rxe0")
     */
    public VerbsNicRegistrar(MemorySegment pd, String name) {
        this.pd = Objects.requireNonNull(pd, "pd");
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Registration registerDmaBuf(int fd, long offset, long length, long iova, int access) {
        return new Mr(VerbsNative.ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access));
    }

    @Override
    public Registration registerMemory(long address, long length, int access) {
        return new Mr(VerbsNative.ibv_reg_mr(pd, MemorySegment.ofAddress(address), length, access));
    }

    /** One {@code struct ibv_mr *}. */
    private static final class Mr implements Registration {
        private final MemorySegment mr;
        private final int lkey;
        private final int rkey;
        private final AtomicBoolean closed = new AtomicBoolean();

        Mr(MemorySegment mr) {
            this.mr = mr;
            MemorySegment s = mr.reinterpret(ibv_mr.sizeof());
            this.lkey = ibv_mr.lkey(s);
            this.rkey = ibv_mr.rkey(s);
        }

        @Override
        public int lkey() {
            return lkey;
        }

        @Override
        public int rkey() {
            return rkey;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                VerbsNative.check("ibv_dereg_mr", ibverbs_h.ibv_dereg_mr(mr));
            }
        }
    }
}
