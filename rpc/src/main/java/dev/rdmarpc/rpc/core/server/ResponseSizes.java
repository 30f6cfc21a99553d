package dev.rdmarpc.rpc.core.server;

/**
 * What a server call knows of its response's size: told once the response is written (by
 * {@link ResponseWriter}, on whichever thread writes it), read by {@code CallContext.responseBytes}
 * (on the handler's or an interceptor's thread).
 */
abstract class ResponseSizes {
    /** The response's bytes once written; -1 before. */
    volatile long responseBytes = -1;

    /** @param bytes the response's encoded message plus its attachment */
    final void responseWritten(long bytes) {
        responseBytes = bytes;
    }

    /** @return the response's encoded message plus its attachment, or -1 before it was written */
    public long responseBytes() {
        return responseBytes;
    }
}
