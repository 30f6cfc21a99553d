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

        @Override
        public String toString() {
            return "SlabListener.NONE";
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

    /**
     * Chains two listeners, as a transport that registers slabs chains a user's listener after its
     * own: a new slab goes to this listener, then to {@code next}; a freed slab to {@code next}, then
     * to this one. When {@code next} fails on a new slab, this listener is told the slab is freed
     * before the exception goes on (so a registration is undone); when {@code next} fails on a freed
     * slab, this listener is still told and the exception goes on after.
     *
     * @param next the listener told second about new slabs and first about freed ones
     * @return both, in that order; this listener itself when {@code next} is {@link #NONE}
     */
    default SlabListener andThen(SlabListener next) {
        if (next == NONE) {
            return this;
        }
        SlabListener first = this;
        return new SlabListener() {
            @Override
            public void slabCreated(Slab slab) {
                first.slabCreated(slab);
                try {
                    next.slabCreated(slab);
                } catch (RuntimeException e) {
                    try {
                        first.slabFreed(slab);
                    } catch (RuntimeException undo) {
                        e.addSuppressed(undo);
                    }
                    throw e;
                }
            }

            @Override
            public void slabFreed(Slab slab) {
                try {
                    next.slabFreed(slab);
                } finally {
                    first.slabFreed(slab);
                }
            }

            @Override
            public String toString() {
                return first + " then " + next;
            }
        };
    }
}
