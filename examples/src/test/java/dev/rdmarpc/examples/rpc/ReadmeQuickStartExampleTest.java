package dev.rdmarpc.examples.rpc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's quick start is an excerpt of {@link EchoExample}, which {@link EchoExampleTest} runs:
 * every line of the README's {@code java} block must be a line of EchoExample.java (spaces aside), so
 * the excerpt cannot drift from code that compiles and runs.
 */
class ReadmeQuickStartExampleTest {
    @Test
    void everyLineOfTheReadmeQuickStartIsInEchoExample() throws Exception {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !(Files.exists(root.resolve("README.md")) && Files.exists(root.resolve("examples")))) {
            root = root.getParent();
        }
        assertTrue(root != null, "README.md not found above " + Path.of("").toAbsolutePath());
        String readme = Files.readString(root.resolve("README.md"));
        int section = readme.indexOf("## Quick start");
        int start = readme.indexOf("```java\n", section);
        int end = readme.indexOf("```", start + 8);
        assertTrue(section >= 0 && start > section && end > start, "README has a Quick start with a java block");
        List<String> example = Files.readAllLines(
                root.resolve("examples/src/main/java/dev/rdmarpc/examples/rpc/EchoExample.java")).stream()
                .map(ReadmeQuickStartExampleTest::normalize).toList();
        List<String> block = readme.substring(start + 8, end).lines().map(ReadmeQuickStartExampleTest::normalize)
                .filter(l -> !l.isEmpty()).toList();
        assertTrue(block.size() >= 10, "the quick start has code: " + block);
        for (String line : block) {
            assertTrue(example.contains(line), "README quick start line not in EchoExample.java: " + line);
        }
    }

    private static String normalize(String line) {
        return line.strip().replaceAll("\\s+", " ");
    }
}
