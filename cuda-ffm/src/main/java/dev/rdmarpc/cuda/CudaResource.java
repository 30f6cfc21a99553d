package dev.rdmarpc.cuda;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A driver object that belongs to a {@link CudaContext}: device memory, pinned or registered host
 * memory, a stream, an event. Its creator owns it and closes it; {@link #close()} frees it exactly
 * once (later calls do nothing). Closing the context closes whatever of its resources is still open,
 * newest first.
 *
 * <p>Thread-safety: methods may be called from any thread; each one makes the owning context current
 * on the calling thread first (virtual threads may move between carrier threads, so nothing relies
 * on a context set earlier). Do not close a resource while another thread, or queued asynchronous
 * work, still uses it.
 */
public abstract sealed class CudaResource implements AutoCloseable
        permits DeviceBuffer, PinnedHostMemory, HostRegistration, CudaStream, CudaEvent {
    private final CudaContext context;
    private final AtomicBoolean closed = new AtomicBoolean();

    CudaResource(CudaContext context) {
        this.context = context;
    }

    /** @return the context the resource belongs to */
    public final CudaContext context() {
        return context;
    }

    /** @return true once {@link #close()} was called */
    public final boolean isClosed() {
        return closed.get();
    }

    /**
     * Frees the resource (once; later calls return at once).
     *
     * @throws CudaException when the driver reports an error while freeing (the resource counts as
     *                       closed anyway)
     */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        context.forget(this);
        context.makeCurrentForClose();
        free();
    }

    /** Makes the context current and checks that this resource is open. */
    final void enter() {
        if (closed.get()) {
            throw new IllegalStateException(what() + " is closed");
        }
        context.makeCurrent();
    }

    /** Releases the native resource; called once, with the context current. */
    abstract void free();

    /** A short name for messages ("device buffer of 1048576 bytes"). */
    abstract String what();
}
