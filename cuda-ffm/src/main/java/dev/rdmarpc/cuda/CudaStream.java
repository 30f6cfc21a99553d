package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.MemorySegment;

/**
 * A stream: work queued on it runs in order, asynchronously to the host ({@code cuStreamCreate},
 * destroyed by {@link #close()}). See {@link CudaResource} for ownership and threads.
 */
public final class CudaStream extends CudaResource {
    private final MemorySegment handle;

    CudaStream(CudaContext context, MemorySegment handle) {
        super(context);
        this.handle = handle;
    }

    /** @return the {@code CUstream} handle, for the raw bindings */
    public MemorySegment handle() {
        return handle;
    }

    MemorySegment handleForUse() {
        if (isClosed()) {
            throw new IllegalStateException(what() + " is closed");
        }
        return handle;
    }

    /** Waits until everything queued so far has run ({@code cuStreamSynchronize}). */
    public void synchronize() {
        enter();
        Cuda.check("cuStreamSynchronize", cuda_h.cuStreamSynchronize(handle));
    }

    /** @return true when everything queued so far has run ({@code cuStreamQuery}), without waiting */
    public boolean isIdle() {
        enter();
        int rc = cuda_h.cuStreamQuery(handle);
        if (rc == cuda_h.CUDA_ERROR_NOT_READY()) {
            return false;
        }
        Cuda.check("cuStreamQuery", rc);
        return true;
    }

    /** Makes work queued later on this stream wait until {@code event} has happened ({@code cuStreamWaitEvent}). */
    public void waitFor(CudaEvent event) {
        MemorySegment e = event.handleForUse();
        enter();
        Cuda.check("cuStreamWaitEvent", cuda_h.cuStreamWaitEvent(handle, e, 0));
    }

    @Override
    void free() {
        Cuda.check("cuStreamDestroy_v2", cuda_h.cuStreamDestroy_v2(handle));
    }

    @Override
    String what() {
        return "stream 0x" + Long.toHexString(handle.address());
    }

    @Override
    public String toString() {
        return "CudaStream[" + what() + (isClosed() ? ", closed" : "") + "]";
    }
}
