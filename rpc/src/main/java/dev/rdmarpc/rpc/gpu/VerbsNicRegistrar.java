package dev.rdmarpc.rpc.gpu;

import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import java.util.Objects;

/**
 * {@link NicRegistrar} over the verbs layer for one protection domain:
 * {@link ProtectionDomain#registerDmaBuf} and {@link ProtectionDomain#registerAddress}, each
 * registration a {@link MemoryRegion} closed (deregistered) once. The protection domain stays its
 * owner's (the RDMA transport, or whoever opened it) and refuses to close while a registration made
 * here is open. Thread-safe.
 */
public final class VerbsNicRegistrar implements NicRegistrar {
    private final ProtectionDomain pd;

    /**
     * @param pd the protection domain the registrations are made in
     */
    public VerbsNicRegistrar(ProtectionDomain pd) {
        this.pd = Objects.requireNonNull(pd, "pd");
    }

    /** @return the device's name ("mlx5_0", "rxe0") */
    @Override
    public String name() {
        return pd.context().name();
    }

    @Override
    public Registration registerDmaBuf(int fd, long offset, long length, long iova, int access) {
        return new Region(pd.registerDmaBuf(offset, length, iova, fd, access));
    }

    @Override
    public Registration registerMemory(long address, long length, int access) {
        return new Region(pd.registerAddress(address, length, access));
    }

    /** One memory region of the verbs layer. */
    private record Region(MemoryRegion mr) implements Registration {
        @Override
        public int lkey() {
            return mr.lkey();
        }

        @Override
        public int rkey() {
            return mr.rkey();
        }

        @Override
        public void close() {
            mr.close(); // idempotent
        }
    }
}
