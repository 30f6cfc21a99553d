package dev.rdmarpc.ibverbs.verbs;

/**
 * Receives a device's asynchronous events ({@link Context#startAsyncEvents}) on the monitor's thread,
 * one at a time. The event is acknowledged after the listener returns, and a QP, CQ or SRQ the event
 * names cannot be destroyed until then, so keep it short; do not close the named resource from
 * inside the listener (that would wait for the acknowledgement: a deadlock). A listener exception is
 * logged and the monitor goes on.
 */
@FunctionalInterface
public interface AsyncEventListener {
    /** One event. */
    void onEvent(AsyncEvent event);
}
