package dev.rdmarpc.rpc.core.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What a server call knows of its response's size: told once the response is written (by
 * {@link ResponseWriter}, on whichever thread writes it), read by {@code CallContext.responseBytes}
 * (on the handler's or an interceptor's thread). Release and acquire, not volatile: the inline call
 * that sets and resets it per call on the I/O thread pays no fence for it.
 */
abstract class ResponseSizes {
    private static final VarHandle RESPONSE_BYTES;

    static {
        try {
            RESPONSE_BYTES = MethodHandles.lookup().findVarHandle(ResponseSizes.class, "responseBytes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The response's bytes once written; -1 before. Accessed through {@link #RESPONSE_BYTES}. */
    @SuppressWarnings("unused")
    private long responseBytes = -1;

    /** @param bytes the response's encoded message plus its attachment */
    final void responseWritten(long bytes) {
        RESPONSE_BYTES.setRelease(this, bytes);
    }

    /** For a call object used again: its next response is not written yet. */
    final void responseUnknown() {
        RESPONSE_BYTES.setRelease(this, -1L);
    }

    /** @return the response's encoded message plus its attachment, or -1 before it was written */
    public long responseBytes() {
        return (long) RESPONSE_BYTES.getAcquire(this);
    }
}
