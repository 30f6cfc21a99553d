package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.transport.loop.IdleFrameTimers;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The idle and frame timeouts of an RDMA connection ({@link RdmaTimers}), on ticks: times in
 * milliseconds from the connection's set-up, as nanoseconds. The VM tests run them on real
 * connections ({@code RdmaTimeoutsTest}).
 */
class RdmaTimersTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 1_000_000 * MS;

    private static IOException check(IdleFrameTimers t, long ms, long partial, boolean paused, boolean busy) {
        return t.check(T0 + ms * MS, partial, paused, busy);
    }

    @Test
    void idlenessCountsFromTheSetUpSoAConnectionThatSendsNothingIsClosed() {
        IdleFrameTimers t = RdmaTimers.of(0, 500 * MS, T0);
        assertNull(check(t, 490, 0, false, false));
        IOException e = check(t, 500, 0, false, false);
        assertInstanceOf(IdleTimeoutException.class, e);
        assertTrue(e.getMessage().contains("closed after 500 ms idle") && e.getMessage().contains("timeouts.idle"),
                e.getMessage());
    }

    @Test
    void aMessageACallInFlightOrAPauseKeepsItOpen() {
        IdleFrameTimers t = RdmaTimers.of(0, 500 * MS, T0);
        t.received();
        assertNull(check(t, 400, 0, false, false));
        assertNull(check(t, 800, 0, false, false), "400 ms after the message");
        assertNull(check(t, 900, 0, false, true), "busy");
        assertNull(check(t, 1300, 0, false, false));
        assertNull(check(t, 1350, 0, true, false), "paused");
        assertNull(check(t, 1800, 0, false, false));
        assertNotNull(check(t, 1850, 0, false, false), "500 ms after the pause");
    }

    @Test
    void aClientConnectionIsNeverClosedForIdleness() {
        IdleFrameTimers t = RdmaTimers.of(30_000 * MS, 0, T0);
        assertNull(check(t, 3_600_000, 0, false, false));
    }

    @Test
    void aFrameThatStopsPartWayIsRefusedAfterTheFrameTimeout() {
        IdleFrameTimers t = RdmaTimers.of(1000 * MS, 0, T0);
        assertNull(check(t, 100, 2 << 20, false, false), "timed from this tick");
        assertNull(check(t, 1090, 2 << 20, false, false));
        IOException e = check(t, 1100, 2 << 20, false, false);
        assertInstanceOf(ProtocolException.class, e);
        assertTrue(e.getMessage().contains("frame incomplete after 1000 ms: 2097152 bytes")
                && e.getMessage().contains("timeouts.frameRead"), e.getMessage());
    }

    @Test
    void eachFrameHasItsOwnTimeAndAPauseDoesNotCount() {
        IdleFrameTimers t = RdmaTimers.of(1000 * MS, 0, T0);
        assertNull(check(t, 0, 1 << 20, false, false));
        t.frameDone();
        assertNull(check(t, 900, 1 << 20, false, false), "a second frame, timed from here");
        assertNull(check(t, 1800, 1 << 20, false, false));
        assertNull(check(t, 1900, 1 << 20, true, false), "paused: this side does not read");
        assertNull(check(t, 2000, 1 << 20, false, false), "timed again from here");
        assertNull(check(t, 2900, 1 << 20, false, false));
        assertNotNull(check(t, 3000, 1 << 20, false, false));
    }

    @Test
    void zeroTurnsBothOff() {
        IdleFrameTimers t = RdmaTimers.of(0, 0, T0);
        assertNull(check(t, 0, 1 << 20, false, false));
        assertNull(check(t, 10_000_000, 1 << 20, false, false));
    }
}
