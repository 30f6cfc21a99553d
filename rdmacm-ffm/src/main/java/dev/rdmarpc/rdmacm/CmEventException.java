package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;

/**
 * A connection-manager event that reports a failure, or that was not the one expected: the
 * message names the event ({@code RDMA_CM_EVENT_*}), its status and, where the status is an errno,
 * errno's {@code strerror} text; {@link #event()} is the whole event.
 */
public class CmEventException extends RdmaCmException {
    private static final long serialVersionUID = 1L;

    private final transient CmEvent event;
    private final CmEventType expected;

    /**
     * @param event    the event received
     * @param expected the type that was expected, or {@code null} when the event is reported as is
     */
    public CmEventException(CmEvent event, CmEventType expected) {
        super(message(event, expected), event.type().nativeName(), event.errno());
        this.event = event;
        this.expected = expected;
    }

    /** The event that was received. */
    public CmEvent event() {
        return event;
    }

    /** The type that was expected instead, or {@code null}. */
    public CmEventType expected() {
        return expected;
    }

    private static String message(CmEvent event, CmEventType expected) {
        StringBuilder b = new StringBuilder();
        if (expected != null) {
            b.append("expected ").append(expected.nativeName()).append(", got ");
        }
        b.append(event.type().nativeName());
        if (event.status() < 0) {
            int errno = -event.status();
            b.append(": ").append(VerbsNative.strerror(errno)).append(" (errno ").append(errno).append(')');
        } else if (event.type() == CmEventType.REJECTED) {
            b.append(": reject reason ").append(event.status());
            if (event.status() == CmEvent.REJECT_CONSUMER_DEFINED) {
                b.append(" (rejected by the peer)");
            }
        } else if (event.status() != 0) {
            b.append(": status ").append(event.status());
        }
        if (event.id() != null) {
            b.append(" on ").append(event.id());
        }
        return b.toString();
    }
}
