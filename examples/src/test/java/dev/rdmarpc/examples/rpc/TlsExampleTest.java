package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code examples/run tls}'s main class: the key stores are made with keytool, the call goes over
 * TLS 1.3, and a second run reuses the stores it finds.
 */
@Timeout(120)
class TlsExampleTest {
    @Test
    void makesKeyStoresAndCallsOverTls13(@TempDir Path dir) throws Exception {
        for (int round = 0; round < 2; round++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int exit = TlsExample.run(dir, new PrintStream(out, true, StandardCharsets.UTF_8));
            String text = out.toString(StandardCharsets.UTF_8).strip();
            assertEquals(0, exit, text);
            assertEquals("hello ada over TLSv1.3", text);
            assertTrue(Files.size(dir.resolve("server.p12")) > 0 && Files.size(dir.resolve("trust.p12")) > 0);
        }
    }
}
