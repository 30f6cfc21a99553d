package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link LargeCallsContract} over TCP loopback, default settings as a new user has them. */
@Timeout(300)
class LargeCallsTcpTest extends LargeCallsContract {
    @Override
    protected RpcServer startServer() {
        return echoServer(RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0))).start();
    }

    @Override
    protected RpcClient connect(RpcServer server) {
        return RpcClient.connect(server.address());
    }

    @Override
    protected RpcClientPool pool() {
        return RpcClientPool.builder().build();
    }

    @Override
    protected Duration callTimeout() {
        return Duration.ofSeconds(10);
    }

    @Test
    void blockingLargeCallsNeverLockTheConnection() throws Exception {
        runCases(new int[][] {
            {256 << 10, 64, 2},
            {256 << 10, 2, 4},
            {1 << 20, 32, 2},
            {1 << 20, 8, 2},
            {8 << 20, 16, 1},
            {8 << 20, 4, 2},
            {8 << 20, 48, 1},
        }, 3);
    }

    /**
     * A peer that never reads: the kernel's buffers fill, then the connection's send queue. A blocking
     * call that finds the queue over its limit waits for room until its deadline, then fails with
     * OVERLOADED (it used to be queued regardless); the queue never holds more than the limit plus
     * one frame, however many threads call.
     */
    @Test
    void aBlockingCallWaitsForRoomThenFailsOverloaded() throws Exception {
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             RpcClient client = RpcClient.connect((InetSocketAddress) silent.getLocalAddress())) {
            int frame = 4 << 20; // the pool rounds a large buffer up to a power of two: keep the frame at one
            byte[] payload = new byte[frame - 64];
            Duration timeout = Duration.ofMillis(300);
            RpcException overloaded = null;
            long overloadedAfter = 0;
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 40 && overloaded == null; i++) {
                long start = System.nanoTime();
                try {
                    client.call(ECHO_BYTES, payload, timeout);
                } catch (RpcException e) {
                    seen.add(e.status().name());
                    if (e.status() == Status.OVERLOADED) {
                        overloaded = e;
                        overloadedAfter = System.nanoTime() - start;
                    } else {
                        assertEquals(Status.TIMEOUT, e.status(), e::toString); // queued, never answered
                    }
                }
            }
            assertTrue(overloaded != null, "no call was refused: " + seen);
            assertTrue(overloaded.getMessage().contains("send queue full"), overloaded::getMessage);
            assertTrue(overloadedAfter >= timeout.toNanos() * 9 / 10, "OVERLOADED after only "
                    + TimeUnit.NANOSECONDS.toMillis(overloadedAfter) + " ms: it did not wait for room");
            // Now many threads at once: still at most the limit plus one frame queued.
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        client.call(ECHO_BYTES, payload, timeout);
                    } catch (RpcException e) {
                        // TIMEOUT or OVERLOADED: what is checked is the memory below
                    }
                }));
            }
            for (Thread t : threads) {
                t.join(10_000);
            }
            long queued = client.bufferPool().largeBytesInUse();
            assertTrue(queued <= ClientBuilder.SEND_HIGH_WATER_MARK + frame,
                    "queued " + queued + " bytes, over the limit plus one frame");
        }
    }
}
