package dev.rdmarpc.rpc;

import java.net.InetSocketAddress;

/**
 * What a server handler knows about the call it serves. The object is reused between calls: it is
 * valid only until the handler returns, and only on the handler's thread.
 */
public interface CallContext {
    /** @return the client's address */
    InetSocketAddress peer();

    /** @return the wire id of the called method */
    int methodId();

    /** @return the request id the client chose (unique among its outstanding calls) */
    long requestId();

    /**
     * The request attachment: a view of the received bytes, valid until the handler returns.
     *
     * @return the attachment, {@link Attachment#NONE} when the client sent none
     */
    Attachment requestAttachment();

    /**
     * Sets the attachment sent after the response payload. Its memory must stay valid and unchanged
     * until the handler returns (it is written out then).
     *
     * @param attachment the attachment, or {@link Attachment#NONE}
     */
    void responseAttachment(Attachment attachment);

    /**
     * Whether the client cancelled this call ({@code cancel} on its future, or an interrupted
     * blocking call). A blocking handler that sees it may stop early: its result is not sent. An
     * inline handler (on the I/O thread) runs to its end before a cancel can be read, and sees false.
     *
     * @return true once the client's cancel has arrived
     */
    default boolean isCancelled() {
        return false;
    }

    /**
     * Runs {@code listener} when the client cancels this call: on the connection's I/O thread, right
     * after the handler's thread was interrupted, so it must be short and must not block; at once,
     * on the caller's thread, when the call is cancelled already. Never runs once the handler has
     * returned, nor for an inline handler.
     *
     * @param listener what to do on cancellation (close a resource the handler waits on, say)
     */
    default void onCancel(Runnable listener) {
        java.util.Objects.requireNonNull(listener, "listener");
    }
}
