package dev.rdmarpc.rpc;

import java.util.Objects;

/**
 * The one exception type of the RPC layer: a failed call, with its {@link Status}.
 *
 * <p>For {@link Status#HANDLER_FAILED} the message is the server handler's own message (its
 * exception's {@code getMessage()}, or its class name when that is null). A handler may also throw an
 * {@code RpcException} itself to answer with a chosen status and message.
 */
public class RpcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The status of the failure. */
    private final Status status;

    /**
     * @param status  why the call failed, not {@link Status#OK}
     * @param message details
     */
    public RpcException(Status status, String message) {
        super(message);
        this.status = check(status);
    }

    /**
     * @param status  why the call failed, not {@link Status#OK}
     * @param message details
     * @param cause   the underlying failure
     */
    public RpcException(Status status, String message, Throwable cause) {
        super(message, cause);
        this.status = check(status);
    }

    private static Status check(Status status) {
        if (Objects.requireNonNull(status, "status") == Status.OK) {
            throw new IllegalArgumentException("an RpcException cannot have status OK");
        }
        return status;
    }

    /** @return why the call failed */
    public Status status() {
        return status;
    }

    @Override
    public String toString() {
        return "RpcException[" + status + "]: " + getMessage();
    }
}
