package dev.rdmarpc.bench.stack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.bench.load.CellResult;
import dev.rdmarpc.bench.load.EchoProtocol;
import dev.rdmarpc.bench.load.EchoServer;
import dev.rdmarpc.bench.load.EchoStack;
import dev.rdmarpc.bench.load.MatrixPlan;
import dev.rdmarpc.bench.load.MatrixRunner;
import dev.rdmarpc.bench.load.StackOptions;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Netty baseline, loaded as the CLI loads it, answering real calls on loopback. */
@Timeout(120)
class NettyBaselineTest {
    private static final int MIB = 1 << 20;

    @Test
    void loadsOutsideTheModuleGraphEchoesAndLeavesNoThread() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        try (EchoStack netty = BaselineLoader.netty()) {
            assertEquals("netty-nio", netty.name());
            assertFalse(netty.getClass().getModule().isNamed(), "Netty stays out of the module graph");
            ClassLoader loader = netty.getClass().getClassLoader();
            assertNotEquals(EchoStack.class.getClassLoader(), loader);
            assertEquals(loader, loader.loadClass("io.netty.channel.Channel").getClassLoader(),
                    "Netty itself comes from netty-lib, through the baseline's own loader");
            assertEquals("true", System.getProperty("io.netty.transport.noNative"), "no native transport probing");
            assertThrows(ClassNotFoundException.class, () -> loader.loadClass("io.netty.channel.epoll.Epoll"),
                    "netty-lib holds no native transport");
            assertThrows(ClassNotFoundException.class, () -> loader.loadClass("io.netty.channel.unix.Socket"),
                    "nor the native transports' unix-common classes");
            StackOptions options = new StackOptions(1, 2 * MIB, null, -1);
            assertTrue(netty.describe(options).startsWith("Netty 4.1."), netty.describe(options));
            try (EchoServer server = netty.startServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), options)) {
                assertNotEquals(0, server.address().getPort());
                echoesTheRightBytesOnTheWire(server.address());
                // Several connections, several callers on each (the FIFO of pending callers), up to 1 MiB, and
                // a 64 KiB answer to a 16-byte request (the response-size header).
                for (int response : new int[] {-1, 64 * 1024}) {
                    MatrixPlan plan = new MatrixPlan(response < 0 ? List.of(1, 128, 4096, MIB) : List.of(16), List.of(1, 8),
                            response, 2, 4, Duration.ofMillis(100), Duration.ofMillis(300), 1 << 30, Duration.ofMillis(300), 1);
                    for (CellResult r : MatrixRunner.run(List.of(new MatrixRunner.Target(netty, server.address(), options)),
                            plan, MatrixRunner.CellListener.NONE).get(0)) {
                        assertEquals(0, r.errors(), r.requestBytes() + " x" + r.concurrency() + ": " + r.firstError());
                        assertTrue(r.calls() > 0, "calls " + r.calls());
                        assertTrue(r.p50Us() > 0);
                    }
                }
                // A request for a response above the server's limit: the connection closes, the call fails.
                MatrixPlan tooLarge = new MatrixPlan(List.of(16), List.of(1), 4 * MIB, 1, 1, Duration.ofMillis(100),
                        Duration.ofMillis(100), 1 << 30, Duration.ZERO, 1);
                CellResult r = MatrixRunner.run(List.of(new MatrixRunner.Target(netty, server.address(),
                        new StackOptions(1, 8 * MIB, null, -1))), tooLarge, MatrixRunner.CellListener.NONE).get(0).get(0);
                assertEquals(1, r.errors());
                assertTrue(r.firstError().contains("closed the connection"), r.firstError());
            }
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        List<String> left;
        while (!(left = threadsStartedSince(before)).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(List.of(), left, "threads left running after the stack and its server closed");
    }

    /** The wire format by hand: a 4-byte big-endian length, then the payload; echoed byte for byte. */
    private static void echoesTheRightBytesOnTheWire(InetSocketAddress server) throws IOException {
        try (Socket s = new Socket(server.getAddress(), server.getPort())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            for (int size : new int[] {1, 3, 4, 128, 4096, 65537, MIB}) {
                byte[] request = EchoProtocol.newRequest(size, size);
                out.writeInt(size);
                out.write(request);
                out.flush();
                assertEquals(size, in.readInt());
                byte[] echo = new byte[size];
                in.readFully(echo);
                assertArrayEquals(request, echo, "echo of " + size + " bytes");
            }
            // Two requests back to back (one read on the server), the second asking for 1000 bytes.
            byte[] a = EchoProtocol.newRequest(64, 64);
            byte[] b = EchoProtocol.newRequest(32, 1000);
            out.writeInt(a.length);
            out.write(a);
            out.writeInt(b.length);
            out.write(b);
            out.flush();
            assertEquals(64, in.readInt());
            byte[] echo = new byte[64];
            in.readFully(echo);
            assertArrayEquals(a, echo);
            assertEquals(1000, in.readInt());
            in.readFully(new byte[1000]);
        }
    }

    private static List<String> threadsStartedSince(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !before.contains(t))
                .map(Thread::getName)
                .sorted()
                .toList();
    }
}
