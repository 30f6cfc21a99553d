package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server process is stopped (SIGSTOP) under a waiting call on an RDMA connection (issue 15,
 * point 5): its kernel still answers TCP keepalive and RDMA acknowledgements, so only a ping its
 * process must answer notices. The client's TCP connection beside the RDMA one pings while calls
 * wait and gives the server up when not even the ping is answered: the call fails with
 * {@code CONNECTION_CLOSED} within the default ping interval and timeout (2 s + 3 s), not at its
 * deadline. The server runs in a child JVM (as in {@link PeerKilledTest}).
 */
@RdmaTest
@Timeout(300)
class PeerStoppedTest {

    @Test
    void aWaitingCallFailsSoonAfterTheServerProcessStops() throws Exception {
        try (ChildServerProcess child = ChildServerProcess.start()) {
            try (RpcClient client = RpcClient.builder().address(child.awaitAddress()).rdma(RdmaTestEnv.smallConfig()).connect()) {
                assertArrayEquals(new byte[]{9}, client.call(ChildServer.ECHO, new byte[]{9}));
                // A call the server takes and holds for 10 minutes: the client's pings are answered meanwhile.
                CompletableFuture<byte[]> call = client.callAsync(ChildServer.HANG, new byte[64],
                        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(120)));
                child.awaitLine("HANG", 1);
                Thread.sleep(8000); // longer than ping interval and timeout together: a live server keeps the call
                assertTrue(!call.isDone() && client.isOpen(), "the call waits while the server answers the pings");
                long stoppedAt = System.nanoTime();
                Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(child.process.pid())).inheritIO().start();
                assertTrue(stop.waitFor(60, TimeUnit.SECONDS) && stop.exitValue() == 0, "kill -STOP");
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
                RpcException re = assertInstanceOf(RpcException.class, e.getCause());
                System.out.println("the call failed " + ms + " ms after SIGSTOP: " + re.getMessage());
                assertEquals(Status.CONNECTION_CLOSED, re.status(), re.getMessage());
                assertTrue(re.getMessage().contains("no answer from the peer"), re.getMessage());
                assertTrue(ms < 20_000, "the call failed " + ms + " ms after the server stopped (defaults: 2 s + 3 s)");
            } finally {
                child.process.destroyForcibly(); // a stopped process dies of SIGKILL too
            }
        }
    }

    /**
     * Registered memory outlives a call that ended on this side, until its frame is done (issue 17,
     * point 3). A 1 MiB request attachment in registered memory goes by rendezvous: the server's process
     * would read it, but it is stopped. The call's deadline passes first (1 s): the frame is still bound
     * to a window the peer may read, so {@link RegisteredMemory#transfersInFlight()} stays 1 and
     * {@link RegisteredMemory#close()} waits. No call waits any more, but the frame does, so the client
     * keeps pinging the server; it gives the stopped server up (no answer to its pings), the connection
     * closes, its queue pair is destroyed, and only then does close() return.
     */
    @Test
    void registeredMemoryIsHeldAfterATimedOutCallUntilItsFrameIsDone() throws Exception {
        RdmaConfig config = RdmaTestEnv.smallConfig().send(s -> s.rendezvousThreshold(RdmaConfig.SUGGESTED_RENDEZVOUS_THRESHOLD));
        try (ChildServerProcess child = ChildServerProcess.start();
             RdmaTransport clientT = RdmaTransport.create(config);
             Arena arena = Arena.ofShared()) {
            MemorySegment blob = arena.allocate(1 << 20, 4096);
            RegisteredMemory mem = clientT.register(blob);
            try (RpcClient client = RpcClient.builder().address(child.awaitAddress()).transport(clientT).connect()) {
                assertArrayEquals(new byte[]{9}, client.call(ChildServer.ECHO, new byte[]{9}));
                Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(child.process.pid())).inheritIO().start();
                assertTrue(stop.waitFor(60, TimeUnit.SECONDS) && stop.exitValue() == 0, "kill -STOP");
                CompletableFuture<byte[]> call = client.callAsync(ChildServer.ECHO, new byte[]{1},
                        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1)).withAttachment(Attachment.of(blob)));
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
                RpcException re = assertInstanceOf(RpcException.class, e.getCause());
                assertEquals(Status.DEADLINE_EXCEEDED, re.status(), re.getMessage());
                assertTrue(client.isOpen(), "the deadline passed before the client gave the server up");
                assertEquals(1, mem.transfersInFlight(), "the frame is still the peer's to read: "
                        + clientT.metrics());
                CompletableFuture<Void> closed = CompletableFuture.runAsync(mem::close);
                Thread.sleep(500);
                assertEquals(1, mem.transfersInFlight());
                assertFalse(closed.isDone(), "close() waits while a frame uses the memory");
                long t0 = System.nanoTime();
                closed.get(60, TimeUnit.SECONDS); // the client gives the stopped server up: the frame is dropped
                System.out.println("close() returned " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)
                        + " ms after the check; client open: " + client.isOpen() + "; " + clientT.metrics());
                assertEquals(0, mem.transfersInFlight());
                assertFalse(client.isOpen(), "only the closed connection let the frame go");
            } finally {
                child.process.destroyForcibly();
            }
        }
    }
}
