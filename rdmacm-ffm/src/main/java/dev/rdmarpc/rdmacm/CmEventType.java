package dev.rdmarpc.rdmacm;

/**
 * The kind of a connection-manager event ({@code enum rdma_cm_event_type}), with the C value.
 * {@link #nativeName()} is the name librdmacm's {@code rdma_event_str} prints.
 *
 * <p>The values are those of {@code <rdma/rdma_cma.h>} (a test checks them against the generated
 * bindings); they are spelled out here so that naming an event type never loads librdmacm.
 */
public enum CmEventType {
    /** {@code rdma_resolve_addr} finished: the id is bound to a local device. */
    ADDR_RESOLVED(0),
    /** {@code rdma_resolve_addr} failed; the status is the negated errno (e.g. -ETIMEDOUT). */
    ADDR_ERROR(1),
    /** {@code rdma_resolve_route} finished. */
    ROUTE_RESOLVED(2),
    /** {@code rdma_resolve_route} failed; the status is the negated errno. */
    ROUTE_ERROR(3),
    /** A connection request on a listening id; the event carries a new id for the connection. */
    CONNECT_REQUEST(4),
    /** A reply to {@code rdma_connect} on an id with no QP (with a QP librdmacm reports ESTABLISHED). */
    CONNECT_RESPONSE(5),
    /** Establishing the connection failed; the status is the negated errno. */
    CONNECT_ERROR(6),
    /** The remote side did not answer the connection request; the status is the negated errno. */
    UNREACHABLE(7),
    /** The remote side rejected the connection; the status is the transport's reject reason. */
    REJECTED(8),
    /** The connection is up (on the client, after the server's accept). */
    ESTABLISHED(9),
    /** The connection is down (either side disconnected). */
    DISCONNECTED(10),
    /** The RDMA device of the id was removed. */
    DEVICE_REMOVAL(11),
    /** Multicast join finished (not used by RC ids). */
    MULTICAST_JOIN(12),
    /** Multicast join failed (not used by RC ids). */
    MULTICAST_ERROR(13),
    /** The network address the id is bound to changed. */
    ADDR_CHANGE(14),
    /** The QP of a disconnected id left the time-wait state and may be reused. */
    TIMEWAIT_EXIT(15);

    private static final CmEventType[] BY_VALUE = values();

    private final int value;

    CmEventType(int value) {
        this.value = value;
    }

    /** The C value of {@code enum rdma_cm_event_type}. */
    public int value() {
        return value;
    }

    /** The C enumerator, as {@code rdma_event_str} names it: {@code RDMA_CM_EVENT_} and {@link #name()}. */
    public String nativeName() {
        return "RDMA_CM_EVENT_" + name();
    }

    /** Whether this kind reports a failure (its status then says why). */
    public boolean isError() {
        return switch (this) {
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, MULTICAST_ERROR, DEVICE_REMOVAL -> true;
            default -> false;
        };
    }

    /**
     * The type of a C value.
     *
     * @throws IllegalArgumentException for a value this version does not know
     */
    public static CmEventType of(int value) {
        if (value < 0 || value >= BY_VALUE.length) {
            throw new IllegalArgumentException("unknown rdma_cm_event_type " + value);
        }
        return BY_VALUE[value];
    }
}
