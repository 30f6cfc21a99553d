package dev.rdmarpc.rpc.transport.stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * When a client's waiting calls need the full tick rate for their ping ({@link
 * ReceiveTimers#pingDeadlineWithin}): only within one idle tick of the ping or of its timeout, and
 * the ping and the timeout still fall where they did when idle ticks check them. Times in
 * milliseconds from an arbitrary start, as nanoseconds.
 */
class ReceiveTimersTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 1_000_000 * MS;
    private static final long IDLE_TICK = 250 * MS;

    /** Ping after 2 s of silence, give up 3 s after the ping. */
    private static ReceiveTimers client() {
        return new ReceiveTimers(0, 0, 2000 * MS, 3000 * MS, T0);
    }

    private static IOException check(ReceiveTimers t, long ms) {
        return t.check(T0 + ms * MS, 0, false, true, true);
    }

    /** @return the first refusal of checks at every idle tick from {@code fromMs} to {@code toMs}, both included */
    private static IOException tickThrough(ReceiveTimers t, long fromMs, long toMs) {
        for (long ms = fromMs; ms <= toMs; ms += IDLE_TICK / MS) {
            IOException refused = check(t, ms);
            if (refused != null) {
                return refused;
            }
        }
        return null;
    }

    @Test
    void aSilentClientNeedsTheFullTickRateOnlyWithinAnIdleTickOfItsPing() {
        ReceiveTimers t = client();
        assertFalse(t.pingDeadlineWithin(T0, IDLE_TICK), "the ping is 2 s away");
        assertNull(check(t, 1500));
        assertFalse(t.pingDue());
        assertFalse(t.pingDeadlineWithin(T0 + 1700 * MS, IDLE_TICK), "300 ms away");
        assertTrue(t.pingDeadlineWithin(T0 + 1750 * MS, IDLE_TICK), "one idle tick away");
        assertNull(check(t, 2000));
        assertTrue(t.pingDue(), "due 2 s after the last thing heard");
    }

    @Test
    void afterThePingTheTimeoutIsWhatIsWatched() {
        ReceiveTimers t = client();
        assertNull(check(t, 2000));
        assertTrue(t.pingDue());
        assertFalse(t.pingDeadlineWithin(T0 + 2100 * MS, IDLE_TICK), "the timeout is 2.9 s away");
        assertFalse(t.pingDeadlineWithin(T0 + 4700 * MS, IDLE_TICK));
        assertTrue(t.pingDeadlineWithin(T0 + 4800 * MS, IDLE_TICK));
        assertNull(tickThrough(t, 2250, 4750), "idle ticks until the full rate comes back");
        assertNull(check(t, 4990));
        IOException refused = check(t, 5000);
        assertNotNull(refused, "no answer 3 s after the ping");
        assertTrue(refused.getMessage().contains("not even to a ping"), refused.getMessage());
    }

    @Test
    void aTickHeldUpStartsThePingsWaitAgain() {
        ReceiveTimers t = client();
        assertNull(check(t, 2000));
        assertTrue(t.pingDue());
        assertNull(tickThrough(t, 2250, 3000));
        assertNull(check(t, 9000), "this thread stood still 6 s (a GC pause): the answer may wait unread");
        assertFalse(t.pingDue(), "the ping is out already");
        assertNull(tickThrough(t, 9250, 11750), "3 s from the late tick");
        IOException refused = check(t, 12000);
        assertNotNull(refused, "still no answer 3 s after the ticks came back");
        assertTrue(refused.getMessage().contains("not even to a ping"), refused.getMessage());
    }

    @Test
    void aTickOnlyALittleLateStillGivesUp() {
        ReceiveTimers t = client();
        assertNull(check(t, 2000));
        assertNull(tickThrough(t, 2250, 3500));
        assertNotNull(check(t, 5000), "1.5 s between ticks is not held up: 3 s after the ping");
    }

    @Test
    void bytesHeardMoveThePingAway() {
        ReceiveTimers t = client();
        assertNull(check(t, 1900));
        assertTrue(t.pingDeadlineWithin(T0 + 1900 * MS, IDLE_TICK));
        t.received();
        assertNull(check(t, 1950));
        assertFalse(t.pingDue());
        assertFalse(t.pingDeadlineWithin(T0 + 1950 * MS, IDLE_TICK), "the next ping is 2 s after 1950 ms");
        assertTrue(t.pingDeadlineWithin(T0 + 3700 * MS, IDLE_TICK));
    }

    @Test
    void aSideThatNeverPingsNeverAsks() {
        ReceiveTimers server = new ReceiveTimers(0, 60_000 * MS, T0);
        assertFalse(server.pingDeadlineWithin(T0 + 100_000 * MS, IDLE_TICK));
    }
}
