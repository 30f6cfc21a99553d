package dev.rdmarpc.rpc.buffer;

/**
 * Told when the pool creates or frees native memory, so that a transport can register each slab with
 * a device exactly once (RDMA: {@code ibv_reg_mr} on creation, {@code ibv_dereg_mr} before the
 * memory is freed).
 *
 * <p>Both methods are called on the thread that made the pool grow or close, while no buffer of the
 * slab is in anyone's hands: {@link #slabCreated} before the first buffer of the slab is handed out,
 * {@link #slabFreed} before the slab's arena is closed. A listener must not call back into the pool.
 * A listener that throws from {@link #slabCreated} makes that acquisition fail (the pool frees the
 * slab and reports exhaustion), so a failed registration never hands out unregistered memory.
 */
public interface SlabListener {
    /** A listener that does nothing (TCP needs no registration). */
    SlabListener NONE = new SlabListener() {
        @Override
        public void slabCreated(Slab slab) {
        }

        @Override
        public void slabFreed(Slab slab) {
        }
    };

    /**
     * A slab was allocated and is about to be used.
     *
     * @param slab the new slab; {@link Slab#setRegistration} may attach the transport's handle to it
     */
    void slabCreated(Slab slab);

    /**
     * A slab is about to be freed: deregister it now; its memory is released when this returns.
     *
     * @param slab the slab being freed
     */
    void slabFreed(Slab slab);
}
