package dev.rdmarpc.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** One line about the JVM and the machine, printed with results. */
final class Environment {
    private Environment() {
    }

    static String describe() {
        String cpu = cpuModel();
        return "Java " + Runtime.version() + " (" + System.getProperty("java.vm.vendor", "?") + "), "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch")
                + ", " + Runtime.getRuntime().availableProcessors() + " CPUs" + (cpu == null ? "" : " (" + cpu + ")");
    }

    private static String cpuModel() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String l : lines) {
                if (l.startsWith("model name")) {
                    int colon = l.indexOf(':');
                    return colon < 0 ? null : l.substring(colon + 1).strip().replaceAll("\\s+", " ");
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }
}
