package dev.rdmarpc.rpc;

/**
 * A response with its attachment and metadata, as returned by {@link RpcClient#exchange}. The
 * attachment, if any, is a copy the caller owns (heap memory), so it stays valid as long as it is
 * referenced.
 *
 * @param value      the decoded response
 * @param attachment the response attachment, {@link Attachment#NONE} when the server sent none
 * @param metadata   the response metadata, {@link Metadata#EMPTY} when the server sent none
 * @param <R>        response type
 */
public record Reply<R>(R value, Attachment attachment, Metadata metadata) {
    /** @throws NullPointerException when {@code attachment} or {@code metadata} is null */
    public Reply {
        java.util.Objects.requireNonNull(attachment, "attachment");
        java.util.Objects.requireNonNull(metadata, "metadata");
    }

    /**
     * A reply without metadata.
     *
     * @param value      the decoded response
     * @param attachment the response attachment
     */
    public Reply(R value, Attachment attachment) {
        this(value, attachment, Metadata.EMPTY);
    }
}
