package dev.rdmarpc.rpc;

/**
 * Outcome of a call. {@link #OK} is success; every other status is carried by an
 * {@link RpcException}. Statuses with {@link #isWire()} true can travel in a response frame (the
 * server sets them); the others arise on the client side only.
 */
public enum Status {
    /** Success. */
    OK(0, true),
    /** The server has no handler registered under the method's id. */
    UNKNOWN_METHOD(1, true),
    /** The handler threw; the exception carries the handler's message. */
    HANDLER_FAILED(2, true),
    /**
     * No longer reported: a call or stream whose deadline passed fails with
     * {@link #DEADLINE_EXCEEDED}, on both sides. Its code (3) is kept: read from a frame, it is
     * taken as {@link #DEADLINE_EXCEEDED}.
     *
     * @deprecated a passed deadline is {@link #DEADLINE_EXCEEDED}
     */
    @Deprecated
    TIMEOUT(3, false),
    /** The connection closed (or was never open) before the response arrived. */
    CONNECTION_CLOSED(4, false),
    /** The encoded request or response is longer than the maximum frame length; nothing was sent. */
    PAYLOAD_TOO_LARGE(5, true),
    /** Bytes that do not follow the protocol: a payload the codec could not decode, a bad status code. */
    PROTOCOL_ERROR(6, true),
    /** Too many calls outstanding: on the connection (client side) or in the server (server side). */
    OVERLOADED(7, true),
    /** The buffer pool (or another bounded resource) is exhausted. */
    RESOURCE_EXHAUSTED(8, true),
    /** The server is shutting down and takes no new calls. */
    SHUTTING_DOWN(9, true),
    /** The endpoint could not be reached (connect failed or timed out). */
    UNAVAILABLE(10, false),
    /** The call was cancelled: its future's {@code cancel}, or the calling thread interrupted while it waited. */
    CANCELLED(11, false),
    /**
     * The call's deadline passed: on the client, no response (or stream end) came within the call's
     * timeout, counted from when the call was made (a pool's connect, a call slot, send room and the
     * response all within it); on the server, a blocking call that waited past it for a thread was
     * not started, and a handler or stream still running at it was stopped (see
     * {@link CallContext#remainingNanos()}). Cancelled ({@link #CANCELLED}) means stopped by someone.
     */
    DEADLINE_EXCEEDED(12, true),
    /**
     * The caller could not be identified: a credential missing or not valid (a server interceptor
     * refusing a call without a good auth token, say); on a client, also the server's refusal of its
     * TLS certificate, or of its lack of one, at the connect or at the calls of the connection it closed.
     */
    UNAUTHENTICATED(13, true),
    /** The caller is known but may not make this call. */
    PERMISSION_DENIED(14, true);

    private static final Status[] BY_CODE;

    static {
        Status[] values = values();
        BY_CODE = new Status[values.length];
        for (Status s : values) {
            BY_CODE[s.code] = s;
        }
    }

    private final int code;
    private final boolean wire;

    Status(int code, boolean wire) {
        this.code = code;
        this.wire = wire;
    }

    /** @return the numeric code used in the frame's status field */
    public int code() {
        return code;
    }

    /** @return true when a server may send this status in a response frame */
    public boolean isWire() {
        return wire;
    }

    /**
     * @param code a status code from a frame
     * @return its status, or null when the code is unknown
     */
    public static Status fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
