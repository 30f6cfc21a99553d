package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.rpc.transport.rdma.RdmaConfig;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs {@code examples/run rdma}'s main class in the Soft-RoCE VM: a small call and a 1 MiB one over
 * RDMA. Timeouts are long because the VM's CPU is emulated.
 */
@RdmaTest
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RdmaExampleTest {
    @Test
    void callsOverRdma(RdmaEnvironment rdma) throws Exception {
        RdmaConfig config = new RdmaConfig().timeouts(t -> t.handshake(Duration.ofMinutes(2)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = RdmaExample.run(rdma.address1(), config, Duration.ofMinutes(2),
                new PrintStream(out, true, StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, exit, lines.toString());
        assertEquals(List.of("echo hello over rdma", "size " + (1 << 20)), lines);
    }
}
