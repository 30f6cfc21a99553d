package dev.rdmarpc.ibverbs;

/**
 * A failed native call of the binding modules: the operation that failed and the errno it reported,
 * with its {@code strerror} text in the message. The common base of {@link VerbsException}
 * (libibverbs) and of the connection manager's exception in {@code dev.rdmarpc.rdmacm}; catch those
 * to tell the two libraries apart, this one to handle either.
 */
public abstract class NativeCallException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int errno;

    /**
     * A failed native call.
     *
     * @param operation the C function (e.g. {@code ibv_create_qp})
     * @param errno     the errno it reported
     */
    protected NativeCallException(String operation, int errno) {
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
    protected NativeCallException(String message, String operation, int errno) {
        super(message);
        this.operation = operation;
        this.errno = errno;
    }

    /** A failure that is not one native call's errno. */
    protected NativeCallException(String message, Throwable cause) {
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
