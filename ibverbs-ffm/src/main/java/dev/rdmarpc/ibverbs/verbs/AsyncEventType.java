package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;

/** {@code enum ibv_event_type}: what an {@link AsyncEvent} reports, and about which element. */
public enum AsyncEventType {
    CQ_ERR(Element.CQ), QP_FATAL(Element.QP), QP_REQ_ERR(Element.QP), QP_ACCESS_ERR(Element.QP),
    COMM_EST(Element.QP), SQ_DRAINED(Element.QP), PATH_MIG(Element.QP), PATH_MIG_ERR(Element.QP),
    DEVICE_FATAL(Element.DEVICE), PORT_ACTIVE(Element.PORT), PORT_ERR(Element.PORT), LID_CHANGE(Element.PORT),
    PKEY_CHANGE(Element.PORT), SM_CHANGE(Element.PORT), SRQ_ERR(Element.SRQ), SRQ_LIMIT_REACHED(Element.SRQ),
    QP_LAST_WQE_REACHED(Element.QP), CLIENT_REREGISTER(Element.PORT), GID_CHANGE(Element.PORT),
    WQ_FATAL(Element.WQ),
    /** A value this layer does not know. */
    UNKNOWN(Element.DEVICE);

    /** What the event's element is. */
    public enum Element { CQ, QP, SRQ, WQ, PORT, DEVICE }

    private final Element element;

    AsyncEventType(Element element) {
        this.element = element;
    }

    /** What kind of object the event is about. */
    public Element element() {
        return element;
    }

    /** The C value, or -1 for {@link #UNKNOWN}. */
    public int value() {
        return this == UNKNOWN ? -1 : ordinal();
    }

    /** The constant for a C value. */
    public static AsyncEventType of(int value) {
        return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }

    /** libibverbs' text for the event ({@code ibv_event_type_str}). */
    public String text() {
        Ibverbs.ensureAvailability();
        return ibverbs_h.ibv_event_type_str(value()).getString(0);
    }
}
