package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.testsupport.RdmaTest;
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
}
