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
                IdleStrategy.backOff(Duration.ofMillis(10))}) {
            assertEquals(s, IdleStrategy.parse(s.toString()), s.toString());
        }
        assertEquals("back-off:50us", IdleStrategy.parse("Back-Off").toString());
        assertEquals(Duration.ofMillis(2), IdleStrategy.parse("back-off:2ms").spin());
        assertEquals(Duration.ZERO, IdleStrategy.event().spin());
    }

    @Test
    void badTextAndSpinsAreRefusedWithTheReason() {
        for (String bad : new String[] {"spin", "back-off:", "back-off:5", "back-off:5s", "back-off:us"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdleStrategy.parse(bad), bad);
            assertTrue(e.getMessage().contains(bad) || e.getMessage().contains("back-off spin"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.backOff(Duration.ofNanos(999)));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.backOff(Duration.ofMillis(11)));
        assertThrows(NullPointerException.class, () -> IdleStrategy.backOff(null));
    }
}
