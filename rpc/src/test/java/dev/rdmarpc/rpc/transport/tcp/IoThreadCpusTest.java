package dev.rdmarpc.rpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.rpc.transport.loop.CpuAffinity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code TcpConfig.ioThreadCpus}: the event loops run where they are told, and a CPU the process may not use is refused. */
@Timeout(30)
public class IoThreadCpusTest {

    /** The {@code Cpus_allowed_list} of a /proc {@code status} file: the kernel's own view of a task's CPUs. */
    public static String cpusAllowed(Path status) throws Exception {
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring("Cpus_allowed_list:".length()).trim();
            }
        }
        throw new AssertionError("no Cpus_allowed_list in " + status);
    }

    /** The kernel's CPU list of the thread named {@code name} in this process (from /proc), or null. */
    public static String cpusOfThreadNamed(String name) throws Exception {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                String comm;
                try {
                    comm = Files.readString(task.resolve("comm")).strip();
                } catch (java.io.IOException gone) {
                    continue; // a thread that ended meanwhile
                }
                if (comm.equals(name)) {
                    return cpusAllowed(task.resolve("status"));
                }
            }
        }
        return null;
    }

    /** Waits up to 5 s for the thread to have pinned itself (it does so as it starts). */
    public static String awaitCpusOfThreadNamed(String name, String expected) throws Exception {
        String seen = null;
        for (long end = System.nanoTime() + 5_000_000_000L; System.nanoTime() - end < 0; Thread.sleep(10)) {
            seen = cpusOfThreadNamed(name);
            if (expected.equals(seen)) {
                break;
            }
        }
        return seen;
    }

    @Test
    void eachEventLoopIsPinnedToItsCpuInTurn() throws Exception {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        List<Integer> allowed = CpuAffinity.currentThreadCpus();
        int last = allowed.get(allowed.size() - 1);
        // three loops over a list of two: loop 2 takes the first CPU again
        int[] cpus = {last, allowed.get(0)};
        try (TcpTransport t = TcpTransport.create(new TcpConfig().threadNamePrefix("cpus-tcp")
                .loop(l -> l.ioThreads(3).ioThreadCpus(cpus)))) {
            assertEquals(Integer.toString(last), awaitCpusOfThreadNamed("cpus-tcp-0", Integer.toString(last)));
            assertEquals(Integer.toString(allowed.get(0)),
                    awaitCpusOfThreadNamed("cpus-tcp-1", Integer.toString(allowed.get(0))));
            assertEquals(Integer.toString(last), awaitCpusOfThreadNamed("cpus-tcp-2", Integer.toString(last)));
        }
    }

    @Test
    void unpinnedByDefault() throws Exception {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        assertArrayEquals(new int[0], new TcpConfig().loop().ioThreadCpus());
        try (TcpTransport t = TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1)).threadNamePrefix("free-tcp"))) {
            Thread.sleep(50);
            String seen = cpusOfThreadNamed("free-tcp-0");
            assertEquals(cpusAllowed(Path.of("/proc/self/status")), seen, "left to the scheduler");
        }
    }

    @Test
    void aCpuTheProcessMayNotUseIsRefusedAtCreation() {
        assumeTrue(CpuAffinity.isSupported(), "Linux only");
        int outside = CpuAffinity.MAX_CPUS - 1;
        assumeTrue(!CpuAffinity.currentThreadCpus().contains(outside));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TcpTransport.create(new TcpConfig().loop(l -> l.ioThreads(1).ioThreadCpus(outside))));
        assertTrue(e.getMessage().contains("ioThreadCpus names CPU " + outside), e.getMessage());
    }

    @Test
    void theSettingReadsAListAndRefusesNonsense() {
        String key = "rdmarpc.tcp.ioThreadCpus";
        String before = System.getProperty(key);
        try {
            System.setProperty(key, " 1, 0 ");
            assertArrayEquals(new int[]{1, 0}, new TcpConfig().loop().ioThreadCpus());
            assertTrue(new TcpConfig().toString().contains("ioThreadCpus=1,0"), new TcpConfig().toString());
            System.setProperty(key, "none");
            assertArrayEquals(new int[0], new TcpConfig().loop().ioThreadCpus());
            assertTrue(new TcpConfig().toString().contains("ioThreadCpus=none"), new TcpConfig().toString());
            System.setProperty(key, "");
            assertArrayEquals(new int[0], new TcpConfig().loop().ioThreadCpus());
            System.setProperty(key, "0,x");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, TcpConfig::new);
            assertTrue(e.getMessage().contains("not a CPU number: 'x'"), e.getMessage());
            System.setProperty(key, "1024");
            assertThrows(IllegalArgumentException.class, TcpConfig::new);
        } finally {
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new TcpConfig().loop(l -> l.ioThreadCpus(-1)));
    }
}
