package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Compiles the {@code java} block of the "Quick start" section of docs/guide.md (the API tour the
 * README links) with javac against this module and runs it in a fresh JVM, so the guide cannot drift
 * from the API.
 */
@Timeout(120)
class ReadmeExampleTest {
    @Test
    void quickStartCompilesAndRuns() throws Exception {
        Path readme = findGuide();
        String text = Files.readString(readme);
        int section = text.indexOf("## Quick start");
        assertTrue(section >= 0, "docs/guide.md has a Quick start section");
        int start = text.indexOf("```java\n", section);
        int end = text.indexOf("```", start + 8);
        assertTrue(start > 0 && end > start, "Quick start has a java block");
        String source = text.substring(start + 8, end);
        assertTrue(source.contains("public class QuickStart"));

        Path dir = Files.createTempDirectory("readme-example");
        Path src = dir.resolve("QuickStart.java");
        Files.writeString(src, source);
        String modulePath = System.getProperty("jdk.module.path");
        assertNotNull(modulePath, "tests run on the module path");

        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        int rc = javac.run(new PrintStream(diag, true, StandardCharsets.UTF_8), new PrintStream(diag, true, StandardCharsets.UTF_8),
                "--module-path", modulePath, "--add-modules", "dev.rdmarpc.rpc", "-d", dir.toString(), src.toString());
        assertEquals(0, rc, () -> "README example does not compile:\n" + diag.toString(StandardCharsets.UTF_8));

        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(List.of(java,
                "--enable-native-access=dev.rdmarpc.posix,dev.rdmarpc.ibverbs,dev.rdmarpc.rdmacm,dev.rdmarpc.cuda,dev.rdmarpc.rpc",
                "--module-path", modulePath, "--add-modules", "dev.rdmarpc.rpc", "-cp", dir.toString(), "QuickStart"))
                .redirectErrorStream(true).start();
        boolean exited = p.waitFor(60, TimeUnit.SECONDS);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!exited) {
            p.destroyForcibly();
        }
        assertTrue(exited, "README example did not exit:\n" + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.lines().anyMatch("hello 5"::equals), "README example printed:\n" + out);
        assertTrue(out.lines().anyMatch("hello, ada from quickstart"::equals), "README example printed:\n" + out);
        assertTrue(out.lines().anyMatch("squares 1 4 9"::equals), "README example printed:\n" + out);
    }

    private static Path findGuide() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("docs").resolve("guide.md");
            if (Files.exists(candidate) && Files.exists(dir.resolve("rpc"))) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new AssertionError("docs/guide.md not found above " + Path.of("").toAbsolutePath());
    }
}
