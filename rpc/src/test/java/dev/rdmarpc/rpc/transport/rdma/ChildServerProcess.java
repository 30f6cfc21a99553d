package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ChildServer} in a JVM of its own (started with this JVM's java and module path), its
 * output echoed with a {@code [child]} prefix and kept line by line for the test to wait on. The
 * test that starts one destroys it ({@link #close}).
 */
final class ChildServerProcess implements AutoCloseable {
    final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private ChildServerProcess(Process process) {
        this.process = process;
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    System.out.println("[child] " + l);
                    lines.add(l);
                }
            } catch (Exception ignored) {
                // the child died
            }
        });
    }

    /** Starts the child server on the VM's server address. */
    static ChildServerProcess start() throws Exception {
        ProcessBuilder pb = ChildJvm.command(List.of("-Xmx256m", "-XX:+UseSerialGC"), ChildServer.class,
                RdmaTestEnv.serverAddress());
        System.out.println("starting " + String.join(" ", pb.command()));
        return new ChildServerProcess(pb.start());
    }

    /** @return where the child listens, once it said so (within 2 minutes: JVM start-up under emulation) */
    InetSocketAddress awaitAddress() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            String l = lines.poll(1, TimeUnit.SECONDS);
            assertTrue(process.isAlive() || l != null, "child server died before listening");
            assertTrue(System.nanoTime() < deadline, "child server did not start in time");
            if (l != null && l.startsWith("PORT ")) {
                return new InetSocketAddress(RdmaTestEnv.serverAddress(), Integer.parseInt(l.substring(5).trim()));
            }
        }
    }

    /** Waits (up to 60 s per line) until the child printed {@code line} {@code times} times. */
    void awaitLine(String line, int times) throws InterruptedException {
        for (int seen = 0; seen < times; ) {
            String l = lines.poll(60, TimeUnit.SECONDS);
            assertNotNull(l, "the child did not print " + line + " " + times + " times");
            if (l.equals(line)) {
                seen++;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
