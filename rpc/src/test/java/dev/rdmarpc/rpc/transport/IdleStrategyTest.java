package dev.rdmarpc.rpc.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class IdleStrategyTest {
    @Test
    void parseReadsWhatToStringWrites() {
        for (IdleStrategy s : new IdleStrategy[] {IdleStrategy.event(), IdleStrategy.busyPoll(),
                IdleStrategy.backOff(Duration.ofNanos(50_000)), IdleStrategy.backOff(Duration.ofNanos(1_500)),
                IdleStrategy.backOff(Duration.ofMillis(10)), IdleStrategy.adaptive(),
                IdleStrategy.adaptive(Duration.ofNanos(1_500)), IdleStrategy.adaptive(Duration.ofMillis(10))}) {
            assertEquals(s, IdleStrategy.parse(s.toString()), s.toString());
        }
        assertEquals("back-off:50us", IdleStrategy.parse("Back-Off").toString());
        assertEquals(Duration.ofMillis(2), IdleStrategy.parse("back-off:2ms").spin());
        assertEquals(Duration.ZERO, IdleStrategy.event().spin());
        assertEquals("adaptive:2000us", IdleStrategy.parse("Adaptive").toString());
        assertEquals(IdleStrategy.DEFAULT_MAX_SPIN, IdleStrategy.adaptive().spin());
        assertEquals(Duration.ofNanos(500_000), IdleStrategy.parse("adaptive:500us").spin());
        assertEquals(IdleStrategy.Mode.ADAPTIVE, IdleStrategy.parse("adaptive:1ms").mode());
    }

    @Test
    void badTextAndSpinsAreRefusedWithTheReason() {
        for (String bad : new String[] {"spin", "back-off:", "back-off:5", "back-off:5s", "back-off:us", "adaptive:",
                "adaptive:3", "adaptive:20ms", "adaptive:0us"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdleStrategy.parse(bad), bad);
            assertTrue(e.getMessage().contains(bad) || e.getMessage().contains("most spin must be in"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.backOff(Duration.ofNanos(999)));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.backOff(Duration.ofMillis(11)));
        assertThrows(NullPointerException.class, () -> IdleStrategy.backOff(null));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.adaptive(Duration.ofNanos(999)));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.adaptive(Duration.ofMillis(11)));
        assertThrows(NullPointerException.class, () -> IdleStrategy.adaptive(null));
    }
}
