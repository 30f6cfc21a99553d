package dev.rdmarpc.ibverbs;

/**
 * A libibverbs failure: the operation that failed and the errno it reported, with its
 * {@code strerror} text in the message. The base of every exception of this module.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int errno;

    /**
     * A failed native call.
     *
     * @param operation the C function (e.g. {@code ibv_create_qp})
     * @param errno     the errno it reported
     */
    public VerbsException(String operation, int errno) {
        super(operation + " failed: " + VerbsNative.strerror(errno) + " (errno " + errno + ")");
        this.operation = operation;
        this.errno = errno;
    }

    /** A failure that is not one native call's errno. */
    public VerbsException(String message, Throwable cause) {
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
