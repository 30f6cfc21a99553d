package dev.rdmarpc.rpc.core.server;

/** A server call told the size of its response once it is written (what {@code CallContext.responseBytes} reads). */
interface ResponseSizes {
    /** @param bytes the response's encoded message plus its attachment */
    void responseWritten(long bytes);
}
