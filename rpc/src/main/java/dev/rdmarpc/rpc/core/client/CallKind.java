package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Reply;

/**
 * How a typed call waits and what it completes with: {@link ClientCore#start} takes one.
 */
public enum CallKind {
    /** Blocking; completes with the response value ({@code call}). */
    CALL(true, false),
    /** Blocking; completes with a {@link Reply}, value and attachment ({@code exchange}). */
    EXCHANGE(true, true),
    /** Asynchronous; completes with the response value ({@code callAsync}). */
    CALL_ASYNC(false, false),
    /** Asynchronous; completes with a {@link Reply} ({@code exchangeAsync}). */
    EXCHANGE_ASYNC(false, true);

    private final boolean blocking;
    private final boolean reply;

    CallKind(boolean blocking, boolean reply) {
        this.blocking = blocking;
        this.reply = reply;
    }

    /**
     * @return true when the caller waits: for a free slot and room in the send queue until the
     *         call's deadline, then for the response; false when it fails with OVERLOADED at once
     */
    public boolean blocking() {
        return blocking;
    }

    /** @return true when the call completes with a {@link Reply} */
    public boolean reply() {
        return reply;
    }
}
