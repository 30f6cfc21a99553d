package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.NativeCallException;

/**
 * A librdmacm failure: the operation that failed and the errno it reported, with its
 * {@code strerror} text in the message. The base of every exception of this module.
 */
public class RdmaCmException extends NativeCallException {
    private static final long serialVersionUID = 1L;

    /**
     * A failed native call.
     *
     * @param operation the C function (e.g. {@code rdma_resolve_addr})
     * @param errno     the errno it reported
     */
    public RdmaCmException(String operation, int errno) {
        super(operation, errno);
    }

    /**
     * A failure with its own message that still names an operation (or event) and an errno.
     *
     * @param message   the whole message
     * @param operation the C function or event, or {@code null}
     * @param errno     the errno, or 0
     */
    protected RdmaCmException(String message, String operation, int errno) {
        super(message, operation, errno);
    }

    /** A failure that is not one native call's errno. */
    public RdmaCmException(String message, Throwable cause) {
        super(message, cause);
    }
}
