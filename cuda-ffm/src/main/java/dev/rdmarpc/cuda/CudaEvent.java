package dev.rdmarpc.cuda;

import dev.rdmarpc.cuda.raw.cuda_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

/**
 * An event: a marker recorded into a stream that completes when the stream reaches it
 * ({@code cuEventCreate}, destroyed by {@link #close()}). Events made with timing measure the time
 * between two of them. See {@link CudaResource} for ownership and threads.
 * {@snippet :
 * start.record(stream);
 * buffer.copyFromHostAsync(pinned.segment(), 0, stream);
 * end.record(stream);
 * end.synchronize();
 * float ms = CudaEvent.elapsedMillis(start, end);
 * }
 */
public final class CudaEvent extends CudaResource {
    private final MemorySegment handle;
    private final boolean timing;

    CudaEvent(CudaContext context, MemorySegment handle, boolean timing) {
        super(context);
        this.handle = handle;
        this.timing = timing;
    }

    /** @return the {@code CUevent} handle, for the raw bindings */
    public MemorySegment handle() {
        return handle;
    }

    /** @return true when the event records time */
    public boolean isTiming() {
        return timing;
    }

    MemorySegment handleForUse() {
        if (isClosed()) {
            throw new IllegalStateException(what() + " is closed");
        }
        return handle;
    }

    /** Records the event at the current end of {@code stream} ({@code cuEventRecord}). */
    public void record(CudaStream stream) {
        MemorySegment s = CudaContext.streamOf(stream);
        enter();
        Cuda.check("cuEventRecord", cuda_h.cuEventRecord(handle, s));
    }

    /** Waits until the work before the last {@link #record} has run ({@code cuEventSynchronize}). */
    public void synchronize() {
        enter();
        Cuda.check("cuEventSynchronize", cuda_h.cuEventSynchronize(handle));
    }

    /** @return true when the work before the last {@link #record} has run ({@code cuEventQuery}), without waiting */
    public boolean isComplete() {
        enter();
        int rc = cuda_h.cuEventQuery(handle);
        if (rc == cuda_h.CUDA_ERROR_NOT_READY()) {
            return false;
        }
        Cuda.check("cuEventQuery", rc);
        return true;
    }

    /**
     * The time between two completed timing events ({@code cuEventElapsedTime}), about half a
     * microsecond resolution.
     *
     * @param start recorded first
     * @param end   recorded later, completed
     * @return milliseconds from {@code start} to {@code end}
     * @throws IllegalArgumentException when an event was made without timing
     * @throws CudaException            {@code CUDA_ERROR_NOT_READY} when one has not completed, ...
     */
    public static float elapsedMillis(CudaEvent start, CudaEvent end) {
        if (!start.timing || !end.timing) {
            throw new IllegalArgumentException("elapsed time needs two events created with timing");
        }
        MemorySegment s = start.handleForUse();
        end.enter();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ms = arena.allocate(JAVA_FLOAT);
            Cuda.check("cuEventElapsedTime_v2", cuda_h.cuEventElapsedTime_v2(ms, s, end.handle));
            return ms.get(JAVA_FLOAT, 0);
        }
    }

    @Override
    void free() {
        Cuda.check("cuEventDestroy_v2", cuda_h.cuEventDestroy_v2(handle));
    }

    @Override
    String what() {
        return "event 0x" + Long.toHexString(handle.address());
    }

    @Override
    public String toString() {
        return "CudaEvent[" + what() + (timing ? ", timing" : "") + (isClosed() ? ", closed" : "") + "]";
    }
}
