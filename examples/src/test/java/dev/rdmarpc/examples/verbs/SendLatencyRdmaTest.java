package dev.rdmarpc.examples.verbs;

import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send-lat example in the Soft-RoCE VM: every message comes back with its number (a lost, duplicated
 * or reordered message fails the run), inline (128 B) and not (4 KiB), and the figures it prints are
 * ordered as latencies must be.
 */
@RdmaTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SendLatencyRdmaTest {
    private static final Pattern LINE = Pattern.compile(
            "send-lat (\\d+) B x (\\d+) .*inline (true|false): typical ([\\d.]+) us avg ([\\d.]+) us min ([\\d.]+) us p99 ([\\d.]+) us");

    @ParameterizedTest
    @ValueSource(ints = {128, 4096})
    void pingPongsAndReports(int size, RdmaEnvironment rdma) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = SendLatency.run(new String[]{rdma.device0(), rdma.address0(), rdma.device1(), rdma.address1(),
                Integer.toString(size), "300", "1"}, new PrintStream(out, true));
        String text = out.toString();
        System.out.println(text);
        assertEquals(0, exit, text);
        Matcher m = LINE.matcher(text);
        assertTrue(m.find(), text);
        assertEquals(size, Integer.parseInt(m.group(1)));
        assertEquals(300, Integer.parseInt(m.group(2)));
        assertEquals(size <= 220, Boolean.parseBoolean(m.group(3)), "inline only when it fits: " + text);
        double typical = Double.parseDouble(m.group(4));
        double min = Double.parseDouble(m.group(6));
        double p99 = Double.parseDouble(m.group(7));
        assertTrue(min > 0 && min <= typical && typical <= p99, text);
    }
}
