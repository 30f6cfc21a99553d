package dev.rdmarpc.posix;

/**
 * A C library call failed: the call, the {@code errno} it set and the C library's text for it
 * ({@code strerror}).
 */
public final class PosixException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int errno;

    /**
     * @param operation the call that failed, e.g. {@code "fcntl(F_SETFL)"}
     * @param errno     the errno it set
     */
    public PosixException(String operation, int errno) {
        super(operation + " failed: " + Posix.strerror(errno) + " (errno " + errno + ")");
        this.operation = operation;
        this.errno = errno;
    }

    /** @return the call that failed */
    public String operation() {
        return operation;
    }

    /** @return the errno the call set */
    public int errno() {
        return errno;
    }
}
