package dev.rdmarpc.rpc.transport.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The adaptive spin decision, fed stretches by hand. */
class AdaptiveSpinTest {
    static final long US = 1_000;
    static final long MAX = 2_000 * US;

    @Test
    void aNewLoopSpinsTheMostUntilItHasLearnt() {
        AdaptiveSpin a = new AdaptiveSpin(MAX);
        assertEquals(MAX, a.spinNanos(false));
        assertEquals(MAX, a.spinNanos(true));
    }

    @Test
    void aSteadyPaceIsSpunOneAndAHalfTimesOver() {
        AdaptiveSpin a = new AdaptiveSpin(MAX);
        for (int i = 0; i < 40; i++) {
            a.stretchEnded(100 * US, false);
        }
        assertEquals(150 * US, a.spinNanos(false));
        assertEquals(MAX, a.spinNanos(true), "the other kind learnt nothing");
        assertEquals(0.0, a.missRate(false));
    }

    @Test
    void theLongestRecentStretchSetsTheSpinNotTheAverage() {
        // a send completion 30 us after the request, then the response 1 ms later, and so on
        AdaptiveSpin a = new AdaptiveSpin(MAX);
        for (int i = 0; i < 100; i++) {
            a.stretchEnded(30 * US, true);
            a.stretchEnded(1_000 * US, true);
        }
        long spin = a.spinNanos(true);
        assertTrue(spin >= 1_000 * US && spin <= 1_500 * US, "covers the 1 ms stretches: " + spin);
    }

    @Test
    void stretchesLongerThanTheMostSpinTurnSpinningOffAndShortOnesBackOn() {
        AdaptiveSpin a = new AdaptiveSpin(MAX);
        int n = 0;
        while (a.spinNanos(false) > 0) {
            a.stretchEnded(10_000 * US, false); // a caller every 10 ms: spinning would only burn the core
            n++;
            assertTrue(n < 20, "gives up within a few stretches");
        }
        assertTrue(n >= 3, "not after one long stretch: " + n);
        assertTrue(a.missRate(false) > 0.5);
        assertEquals(MAX, a.spinNanos(true), "calls in flight are learnt apart");
        n = 0;
        while (a.spinNanos(false) == 0) {
            a.stretchEnded(50 * US, false); // learnt while blocking: the pace picked up
            n++;
            assertTrue(n < 20, "spins again within a few stretches");
        }
        for (int i = 0; i < 40; i++) {
            a.stretchEnded(50 * US, false);
        }
        assertEquals(75 * US, a.spinNanos(false));
    }

    @Test
    void theSpinStaysWithinItsBounds() {
        AdaptiveSpin a = new AdaptiveSpin(MAX);
        for (int i = 0; i < 100; i++) {
            a.stretchEnded(0, false);
            a.stretchEnded(1_900 * US, true);
        }
        assertEquals(AdaptiveSpin.MIN_SPIN_NANOS, a.spinNanos(false));
        assertEquals(MAX, a.spinNanos(true), "1.5 x 1.9 ms is capped at the most");
        AdaptiveSpin tiny = new AdaptiveSpin(US);
        assertEquals(US, tiny.spinNanos(false), "a most spin below the floor wins");
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveSpin(0));
    }
}
