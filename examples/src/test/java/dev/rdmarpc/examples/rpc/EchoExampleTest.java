package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs {@code examples/run echo}'s main class over TCP on loopback and checks every line it prints. */
@Timeout(60)
class EchoExampleTest {
    @Test
    void callsBlockingAndAsyncWithMetadataAndAnErrorStatus() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = EchoExample.run(new PrintStream(out, true, StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, exit, lines.toString());
        assertEquals("echo hello", lines.get(0));
        assertEquals("length 5", lines.get(1));
        assertEquals("hello ada, from bob (served-by echo-example)", lines.get(2));
        assertTrue(lines.get(3).startsWith("greet without a user: UNAUTHENTICATED"), lines.get(3));
        assertTrue(lines.get(3).contains("no user in the metadata"), lines.get(3));
    }
}
