package dev.rdmarpc.rpc;

import java.net.InetSocketAddress;
import java.security.Principal;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * What a server handler knows about the call it serves. The object is reused between calls: it is
 * valid only until the handler returns, and only on the handler's thread.
 */
public interface CallContext {
    /** @return the client's address */
    InetSocketAddress peer();

    /**
     * The TLS session of the connection the call came on, once its handshake is done: the protocol,
     * the cipher and, under mutual TLS, the client's verified certificate chain
     * ({@code getPeerCertificates()}).
     *
     * @return the session, or null when the connection is plain TCP
     */
    default SSLSession tlsSession() {
        return null;
    }

    /**
     * The client's verified identity under mutual TLS: the subject of the certificate it proved it
     * holds the key of, checked against the server's trusted issuers.
     *
     * @return the principal, or null without TLS or when the client showed no certificate
     */
    default Principal peerPrincipal() {
        SSLSession s = tlsSession();
        if (s == null) {
            return null;
        }
        try {
            return s.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    /** @return the wire id of the called method */
    int methodId();

    /** @return the request id the client chose (unique among its outstanding calls) */
    long requestId();

    /** @return the name of the called method, as registered */
    String methodName();

    /**
     * The request's metadata (see {@link Metadata}), copied to the heap; {@link Metadata#EMPTY}
     * when the client sent none (then nothing is allocated). A raw handler reads it in place through
     * {@link RawCall#requestMetadataView()}.
     *
     * @return the client's metadata for this call
     */
    Metadata requestMetadata();

    /**
     * Sets the metadata sent back with the response, successful or not (an error response carries it
     * too, and the client sees it in {@link RpcException#metadata()}). Replaces what an interceptor
     * or an earlier call set: add to it with {@code responseMetadata(responseMetadata().with(k, v))}.
     * Longer than the server's {@code maxMetadataBytes}, the call is answered
     * {@link Status#PAYLOAD_TOO_LARGE} instead.
     *
     * @param metadata the response metadata, {@link Metadata#EMPTY} for none
     */
    void responseMetadata(Metadata metadata);

    /** @return the response metadata set so far, {@link Metadata#EMPTY} at first */
    Metadata responseMetadata();

    /**
     * The request attachment: a view of the received bytes, valid until the handler returns.
     *
     * @return the attachment, {@link Attachment#NONE} when the client sent none
     */
    Attachment requestAttachment();

    /**
     * Sets the attachment sent after the response payload. Its memory must stay valid and unchanged
     * until the handler returns (it is written out then), and longer for host memory registered
     * with the server's RDMA transport ({@link dev.rdmarpc.rpc.transport.rdma.RdmaTransport#register}):
     * an attachment of at least 4 KiB there is not copied but read by the NIC where it lies, after the
     * handler returns, until the client has it (or the connection is gone). Change or free such memory
     * only once its {@link dev.rdmarpc.rpc.transport.rdma.RegisteredMemory#transfersInFlight()} is 0, or
     * its {@link dev.rdmarpc.rpc.transport.rdma.RegisteredMemory#close()} returned (close waits for the
     * transfers).
     *
     * @param attachment the attachment, or {@link Attachment#NONE}
     */
    void responseAttachment(Attachment attachment);

    /**
     * The time left before the client stops waiting for this call: the timeout its request carried,
     * counted from when the server received it. A blocking call still waiting for a thread at its
     * deadline is answered {@link Status#DEADLINE_EXCEEDED} without running; a blocking handler
     * still running then is interrupted ({@link #isCancelled()} turns true) and the call is answered
     * DEADLINE_EXCEEDED. Calls the handler makes on its own thread inherit the deadline: they wait
     * no longer, and fail with DEADLINE_EXCEEDED once it has passed. An inline handler is not
     * interrupted: it may read this and give up itself.
     *
     * @return nanoseconds left (0 or less: passed), or {@link Long#MAX_VALUE} when the call has no deadline
     */
    default long remainingNanos() {
        return Long.MAX_VALUE;
    }

    /**
     * Whether this call was stopped: the client cancelled it ({@code cancel} on its future, or an
     * interrupted blocking call), or its deadline passed while a blocking handler ran. A blocking
     * handler that sees it may stop early: its result is not sent (a cancelled call gets no
     * response, an expired one DEADLINE_EXCEEDED). An inline handler (on the I/O thread) runs to its
     * end before a cancel can be read, and sees false.
     *
     * @return true once the client's cancel has arrived, or the deadline passed
     */
    default boolean isCancelled() {
        return false;
    }

    /**
     * Runs {@code listener} when this call is stopped (see {@link #isCancelled()}): on the connection's I/O thread, right
     * after the handler's thread was interrupted, so it must be short and must not block; at once,
     * on the caller's thread, when the call is cancelled already. Never runs once the handler has
     * returned, nor for an inline handler.
     *
     * @param listener what to do on cancellation (close a resource the handler waits on, say)
     */
    default void onCancel(Runnable listener) {
        java.util.Objects.requireNonNull(listener, "listener");
    }

    /**
     * Bytes of the request: its encoded message plus its attachment, the frame header and metadata left
     * out; for a stream, of every message received so far.
     *
     * @return the request's bytes, or -1 when not known
     */
    default long requestBytes() {
        return -1;
    }

    /**
     * Bytes of the response once it is written: its encoded message plus its attachment; for a stream, of
     * every message sent so far. An interceptor's {@code afterCall} reads it.
     *
     * @return the response's bytes, or -1 before it was written, when the call was answered with an error
     *         status, or when not known (a deferred raw call's response)
     */
    default long responseBytes() {
        return -1;
    }
}
