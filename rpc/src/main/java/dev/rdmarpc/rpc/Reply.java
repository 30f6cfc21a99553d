package dev.rdmarpc.rpc;

/**
 * A response with its attachment, as returned by {@link RpcClient#exchange}. The attachment, if any,
 * is a copy the caller owns (heap memory), so it stays valid as long as it is referenced.
 *
 * @param value      the decoded response
 * @param attachment the response attachment, {@link Attachment#NONE} when the server sent none
 * @param <R>        response type
 */
public record Reply<R>(R value, Attachment attachment) {
}
