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
    /** The metadata the server's error response carried. */
    private transient Metadata metadata = Metadata.EMPTY;

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

    /**
     * The metadata of the failure: on the client, what the server's error response carried (a
     * handler's or interceptor's {@link CallContext#responseMetadata(Metadata)}); on the server, a
     * handler or interceptor that throws this exception may set it to send it with the error.
     *
     * @return the metadata, {@link Metadata#EMPTY} when none
     */
    public Metadata metadata() {
        Metadata m = metadata;
        return m == null ? Metadata.EMPTY : m;
    }

    /**
     * @param metadata metadata to send with the error response (server side), or that came with it
     * @return this
     */
    public RpcException withMetadata(Metadata metadata) {
        this.metadata = Objects.requireNonNull(metadata, "metadata");
        return this;
    }

    @Override
    public String toString() {
        return "RpcException[" + status + "]: " + getMessage();
    }
}
