package dev.rdmarpc.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchCliTest {
    @Test
    void helpPrintsUsage() {
        StringWriter out = new StringWriter();
        CommandLine cl = new CommandLine(new BenchCli());
        cl.setOut(new PrintWriter(out));
        assertEquals(0, cl.execute("--help"));
        assertTrue(out.toString().contains("bench-cli"), out.toString());
    }
}
