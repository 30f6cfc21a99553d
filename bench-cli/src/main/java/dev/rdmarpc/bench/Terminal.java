package dev.rdmarpc.bench;

import java.io.Console;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether a stream is a terminal, without native code. */
final class Terminal {
    private Terminal() {
    }

    /** True when file descriptor 2 is a terminal (Linux: /proc/self/fd/2 points at a tty or pty). */
    static boolean stderrIsTerminal() {
        Path fd2 = Path.of("/proc/self/fd/2");
        if (Files.exists(fd2, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try {
                String target = Files.readSymbolicLink(fd2).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            } catch (IOException | UnsupportedOperationException e) {
                return false;
            }
        }
        Console console = System.console();
        return console != null && console.isTerminal();
    }
}
