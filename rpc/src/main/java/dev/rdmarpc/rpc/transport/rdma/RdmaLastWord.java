package dev.rdmarpc.rpc.transport.rdma;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * An {@link RdmaConnection}'s close with a last word ({@link dev.rdmarpc.rpc.transport.Connection#closeAfter},
 * a server explaining a refusal: idleness, a stalled frame, bad input): reading has stopped and what
 * was half received is given back; once the calls in flight have answered, the last frame is sent
 * like any other, and when its send has completed (the peer's device has it) the connection closes.
 * Everything within {@link #LINGER_NANOS} (a peer that grants no credit never gets it), then the
 * connection closes anyway. I/O thread only.
 */
final class RdmaLastWord {
    /** Most time from the refusal to the close: 5 s, as over TCP. */
    static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final byte[] frame;
    private final Throwable cause;
    private final long deadline;
    private boolean committed;

    RdmaLastWord(byte[] frame, Throwable cause, long now) {
        this.frame = frame;
        this.cause = cause;
        this.deadline = now + LINGER_NANOS;
    }

    /** @return the cause the connection closes with */
    Throwable cause() {
        return cause;
    }

    /**
     * Moves the last word on: commits it once no call is in flight, and says when the connection
     * may close.
     *
     * @return true when the connection closes now: the last word went out, or the time is over, or
     *         it could not be queued
     */
    boolean step(RdmaConnection c, long now) {
        if (now - deadline >= 0) {
            return true;
        }
        if (committed) {
            return c.sentEverything();
        }
        if (c.handler().callsInFlight() > 0) {
            return false; // their responses go first
        }
        long at = c.claim(frame.length);
        if (at < 0) {
            return true;
        }
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, c.claimBuffer(), at, frame.length);
        c.commit();
        committed = true;
        return false;
    }
}
