package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;

/**
 * A librdmacm failure: the operation that failed and the errno it reported, with its
 * {@code strerror} text in the message. The base of every exception of this module.
 */
public class RdmaCmException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int errno;

    /**
     * A failed native call.
     *
     * @param operation the C function (e.g. {@code rdma_resolve_addr})
     * @param errno     the errno it reported
     */
    public RdmaCmException(String operation, int errno) {
        super(operation + " failed: " + VerbsNative.strerror(errno) + " (errno " + errno + ")");
        this.operation = operation;
        this.errno = errno;
    }

    /**
     * A failure with its own message that still names an operation (or event) and an errno.
     *
     * @param message   the whole message
     * @param operation the C function or event, or {@code null}
     * @param errno     the errno, or 0
     */
    protected RdmaCmException(String message, String operation, int errno) {
        super(message);
        this.operation = operation;
        this.errno = errno;
    }

    /** A failure that is not one native call's errno. */
    public RdmaCmException(String message, Throwable cause) {
        super(message, cause);
        this.operation = null;
        this.errno = 0;
    }

    /** The C function that failed, or {@code null} when the failure is not one native call. */
    public String operation() {
        return operation;
    }

    /** The errno the call reported, or 0 when the failure is not one native call. */
    public int errno() {
        return errno;
    }
}
