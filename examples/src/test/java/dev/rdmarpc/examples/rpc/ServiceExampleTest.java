package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs {@code examples/run service}'s main class and checks what each kind of service method returned. */
@Timeout(60)
class ServiceExampleTest {
    @Test
    void inlineBlockingAsyncAndStreamingMethodsAnswer() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = ServiceExample.run(new PrintStream(out, true, StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(0, exit, lines.toString());
        assertEquals(List.of(
                "add Item[name=apple, quantity=3]",
                "count apple 3",
                "restocked Item[name=pear, quantity=2]",
                "restocked Item[name=apple, quantity=7]",
                "total 9"), lines);
    }
}
