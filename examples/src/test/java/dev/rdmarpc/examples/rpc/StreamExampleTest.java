package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs {@code examples/run stream}'s main class: more messages than one window holds go each way, and
 * every running total comes back, the last one the sum of all.
 */
@Timeout(120)
class StreamExampleTest {
    @Test
    void everyTotalComesBackThroughTheWindows() throws Exception {
        int count = 200_000;                                   // 200,000 x 8-byte longs: more than a 1 MiB window
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = StreamExample.run(count, new PrintStream(out, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8).strip();
        assertEquals(0, exit, text);
        assertEquals("sent 200000, received 200000 totals, last " + (long) count * (count + 1) / 2, text);
    }
}
