package dev.rdmarpc.bench.load;

/**
 * Issues echo calls over one connection, at most one outstanding at a time.
 *
 * <p>{@link #call} is invoked by the load generator from any thread, usually from the I/O thread that
 * just delivered the previous response; it must not block and should not allocate. The stack reports
 * the outcome through the listener exactly once per call, from any thread, after checking that the
 * response has the expected length.
 */
public interface EchoCaller extends AutoCloseable {

    /** Starts one call; {@code listener} hears about it exactly once. */
    void call(CallListener listener);

    /** Frees the caller's buffers. Called once, after its last call has completed. */
    @Override
    void close();
}
