package dev.rdmarpc.rpc.internal;

import java.lang.foreign.MemorySegment;

/** Facts about a caller's memory that the API checks before an I/O thread is handed it. */
public final class Segments {
    /** A thread that owns no confined arena: memory it may access, every thread may. Never started. */
    private static final Thread NOT_THE_OWNER = new Thread(() -> { }, "rdmarpc-accessibility-probe");

    private Segments() {
    }

    /**
     * @return true when every thread may access {@code segment}: heap memory, or a global, automatic or
     *         shared arena's; false for a confined arena's, which only its owner thread may touch
     */
    public static boolean anyThreadMayAccess(MemorySegment segment) {
        return segment.isAccessibleBy(NOT_THE_OWNER);
    }
}
