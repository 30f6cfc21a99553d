package dev.rdmarpc.rpc.core;

/**
 * The deadline of the call a handler is serving, per thread, as gRPC's {@code Context} carries it:
 * a call made from inside the handler (on its thread) waits no longer than that call's client does.
 * Set around every handler that has a deadline, cleared when it returns. One holder per thread,
 * made on its first use: reading and setting it allocate nothing after that.
 */
public final class InheritedDeadline {
    private static final ThreadLocal<InheritedDeadline> CURRENT = ThreadLocal.withInitial(InheritedDeadline::new);

    private boolean set;
    private long deadlineNanos;

    private InheritedDeadline() {
    }

    /** The handler on this thread serves a call due at {@code deadlineNanos} ({@link System#nanoTime()}). */
    public static void enter(long deadlineNanos) {
        InheritedDeadline d = CURRENT.get();
        d.deadlineNanos = deadlineNanos;
        d.set = true;
    }

    /** The handler on this thread returned. */
    public static void exit() {
        CURRENT.get().set = false;
    }

    /**
     * @return the time left to the deadline this thread's handler serves (0 or less: passed), or
     *         {@link Long#MAX_VALUE} when the thread serves none (without reading the clock)
     */
    public static long remainingNanos() {
        InheritedDeadline d = CURRENT.get();
        return d.set ? d.deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
    }
}
