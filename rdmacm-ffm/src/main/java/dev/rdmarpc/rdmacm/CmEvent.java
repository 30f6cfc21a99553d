package dev.rdmarpc.rdmacm;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One connection-manager event, copied out of librdmacm's {@code struct rdma_cm_event} before the
 * event was acknowledged ({@code rdma_ack_cm_event}): a plain Java value that stays valid for good.
 *
 * <p>For {@link CmEventType#CONNECT_REQUEST} {@link #id()} is a <em>new</em> id for the requested
 * connection, owned by whoever polled the event: accept or reject it, and close it in every case.
 * {@link #listenId()} is then the listening id the request came to; for other events it is
 * {@code null}.
 *
 * <p>Private data: on InfiniBand and RoCE the transport carries a fixed-size private-data field
 * ({@value CmId#MAX_CONNECT_PRIVATE_DATA} bytes in a connection request, {@value
 * CmId#MAX_ACCEPT_PRIVATE_DATA} in an accept, {@value CmId#MAX_REJECT_PRIVATE_DATA} in a reject),
 * so {@link #privateData()} is that long: the peer's bytes first, then zeros. Protocols that need
 * the exact length put it in their own bytes.
 *
 * @param type        the kind of event
 * @param status      0 on success; for {@link CmEventType#isError() error events} the negated
 *                    errno ({@link #errno()}), or for {@link CmEventType#REJECTED} the transport's
 *                    reject reason (28 when the peer called {@code rdma_reject} on IB/RoCE)
 * @param id          the id the event is about (a new id for {@code CONNECT_REQUEST})
 * @param listenId    for {@code CONNECT_REQUEST}, the listening id; otherwise {@code null}
 * @param privateData the private data the peer sent (empty when the event carries none); the
 *                    accessor returns a copy
 * @param params      the peer's connection parameters for {@code CONNECT_REQUEST},
 *                    {@code CONNECT_RESPONSE}, {@code ESTABLISHED} and {@code REJECTED}
 *                    (as the event's {@code param.conn} holds them); all zero for other events
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
                      ConnectionParams params) {

    /** The reject reason IB/RoCE reports when the peer rejected with {@code rdma_reject} (IB_CM_REJ_CONSUMER_DEFINED). */
    public static final int REJECT_CONSUMER_DEFINED = 28;

    /** Copies {@code privateData}. */
    public CmEvent {
        privateData = privateData.clone();
    }

    /** A copy of the private data. */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** How many bytes of private data the event carries. */
    public int privateDataLength() {
        return privateData.length;
    }

    /**
     * Copies the private data into {@code dst} (as much as fits) without allocating.
     *
     * @return the number of bytes copied
     */
    public int copyPrivateData(byte[] dst, int offset) {
        int n = Math.min(privateData.length, dst.length - offset);
        System.arraycopy(privateData, 0, dst, offset, n);
        return n;
    }

    /**
     * The errno an error event reports ({@code -status}), or 0 for a successful event and for
     * {@link CmEventType#REJECTED} (whose status is a reject reason, not an errno).
     */
    public int errno() {
        return status < 0 ? -status : 0;
    }

    /** Whether this event reports a failure: an error type or a non-zero status. */
    public boolean isError() {
        return type.isError() || status != 0;
    }

    /**
     * Returns this event when it is of type {@code expected} with status 0, and otherwise throws
     * a {@link CmEventException} that names the event, its status and errno text.
     *
     * <p>Careful with channels that carry events of several ids: an unexpected
     * {@code CONNECT_REQUEST} thrown away here leaves its new id to be closed by the caller (it is
     * in {@link CmEventException#event()}).
     */
    public CmEvent require(CmEventType expected) {
        if (type != expected || status != 0) {
            throw new CmEventException(this, expected);
        }
        return this;
    }

    /** The event as an exception, whatever its type ({@link CmEventException}). */
    public CmEventException toException() {
        return new CmEventException(this, null);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CmEvent e && type == e.type && status == e.status && id == e.id && listenId == e.listenId
                && Arrays.equals(privateData, e.privateData) && params.equals(e.params);
    }

    @Override
    public int hashCode() {
        return ((type.hashCode() * 31 + status) * 31 + System.identityHashCode(id)) * 31 + Arrays.hashCode(privateData);
    }

    @Override
    public String toString() {
        int used = privateData.length;
        while (used > 0 && privateData[used - 1] == 0) {
            used--;
        }
        return "CmEvent[" + type.nativeName() + ", status=" + status + ", id=" + id
                + (listenId != null ? ", listenId=" + listenId : "")
                + ", privateData=" + privateData.length + " bytes"
                + (used > 0 ? " (" + HexFormat.of().formatHex(privateData, 0, Math.min(used, 16))
                + (used > 16 ? "..." : "") + ")" : "")
                + ", params=" + params + "]";
    }
}
