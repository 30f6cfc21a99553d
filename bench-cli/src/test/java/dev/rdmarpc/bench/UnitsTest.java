package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class UnitsTest {
    @Test
    void sizes() {
        assertEquals(128, Units.parseSize("128"));
        assertEquals(128, Units.parseSize("128B"));
        assertEquals(128, Units.parseSize("128b"));
        assertEquals(4096, Units.parseSize("4K"));
        assertEquals(4096, Units.parseSize("4k"));
        assertEquals(4096, Units.parseSize("4KB"));
        assertEquals(4096, Units.parseSize("4KiB"));
        assertEquals(1 << 20, Units.parseSize("1M"));
        assertEquals(1 << 20, Units.parseSize("1MiB"));
        assertEquals(8L << 20, Units.parseSize(" 8M "));
        assertEquals(2L << 30, Units.parseSize("2G"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "K", "4Q", "1.5K", "-1", "4 K B x", "128iB", "99999999999999999999"})
    void badSizes(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Units.parseSize(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
    }

    @Test
    void formatsSizesLikeCoroRpc() {
        assertEquals("128B", Units.formatSize(128));
        assertEquals("4K", Units.formatSize(4096));
        assertEquals("256K", Units.formatSize(256 * 1024));
        assertEquals("1M", Units.formatSize(1 << 20));
        assertEquals("8M", Units.formatSize(8 << 20));
        assertEquals("1500B", Units.formatSize(1500));
        assertEquals("1G", Units.formatSize(1L << 30));
    }

    @Test
    void durations() {
        assertEquals(Duration.ofSeconds(5), Units.parseDuration("5s"));
        assertEquals(Duration.ofMillis(500), Units.parseDuration("500ms"));
        assertEquals(Duration.ofMinutes(1), Units.parseDuration("1m"));
        assertEquals(Duration.ofMinutes(2), Units.parseDuration("2min"));
        assertEquals(Duration.ofMillis(1500), Units.parseDuration("1.5s"));
        assertEquals(Duration.ofSeconds(3), Units.parseDuration("3"));
        assertEquals(Duration.ofNanos(250_000), Units.parseDuration("250us"));
        assertEquals(Duration.ofHours(1), Units.parseDuration("1h"));
        assertEquals("5s", Units.formatDuration(Duration.ofSeconds(5)));
        assertEquals("500ms", Units.formatDuration(Duration.ofMillis(500)));
        assertEquals("1m", Units.formatDuration(Duration.ofMinutes(1)));
        assertEquals("1.50s", Units.formatDuration(Duration.ofMillis(1500)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "s", "5x", "five seconds", "-1s", "2d", "25h"})
    void badDurations(String text) {
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration(text));
    }
}
