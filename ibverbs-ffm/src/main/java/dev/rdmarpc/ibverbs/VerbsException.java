package dev.rdmarpc.ibverbs;

/**
 * A libibverbs failure: the operation that failed and the errno it reported, with its
 * {@code strerror} text in the message. The base of every exception of this module.
 */
public class VerbsException extends NativeCallException {
    private static final long serialVersionUID = 1L;

    /**
     * A failed native call.
     *
     * @param operation the C function (e.g. {@code ibv_create_qp})
     * @param errno     the errno it reported
     */
    public VerbsException(String operation, int errno) {
        super(operation, errno);
    }

    /** A failure that is not one native call's errno. */
    public VerbsException(String message, Throwable cause) {
        super(message, cause);
    }
}
