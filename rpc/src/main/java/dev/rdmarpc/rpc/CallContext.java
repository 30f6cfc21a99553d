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
}
