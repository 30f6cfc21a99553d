package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.testsupport.RdmaTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Registered memory comes back (issue 47, point 2), in the Soft-RoCE VM: after a burst of 50
 * connections, each with a call larger than a chunk, and then the pool's idle time ({@code bufferPool.idleRelease},
 * 1 s here, 10 s by default), the server's registered bytes (its slabs, each registered with its
 * devices, and its large buffers) are back to what it had with one resident client before the burst:
 * the slabs beyond that were deregistered and freed by the pool's trim on the I/O thread's tick.
 */
@RdmaTest
@Timeout(300)
class RdmaPoolTrimTest {
    @Test
    void registeredBytesAreBackToTheServersBaselineAfterABurstOf50ConnectionsAndTheIdleTime() throws Exception {
        Duration idleRelease = Duration.ofSeconds(1);
        // 64 KiB chunks: 50 connections of (8 + 3) x 64 KiB = 34 MiB of receive buffers fit the 64 MiB pool
        RdmaConfig config = RdmaTestEnv.smallConfig().bufferPool(p -> p.chunkSize(64 << 10).idleRelease(idleRelease));
        List<RpcClient> burst = new ArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try (RdmaTransport serverT = RdmaTransport.create(config);
             RdmaTransport clientT = RdmaTransport.create(config);
             RpcServer server = RdmaRpcTest.echoServer().transport(serverT).start();
             RpcClient resident = RpcClient.builder().address(server.address()).transport(clientT).connect()) {
            assertArrayEquals(new byte[] {1}, resident.call(RdmaRpcTest.ECHO_BYTES, new byte[] {1}));
            Thread.sleep(idleRelease.multipliedBy(3).toMillis()); // anything the first call left is trimmed
            long baseline = serverT.devices().registeredBytes();
            long reserved0 = serverT.bufferPool().reservedBytes();
            assertTrue(baseline > 0, "the resident client's receive buffers are registered");

            byte[] large = new byte[300_000]; // larger than a chunk: reassembled, and answered from a large buffer
            for (int i = 0; i < large.length; i += 101) {
                large[i] = (byte) i;
            }
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) { // 8 at a time: connect, then a large call; all 50 stay open
                calls.add(callers.submit(() -> {
                    RpcClient c = RpcClient.builder().address(server.address()).transport(clientT).connect();
                    synchronized (burst) {
                        burst.add(c);
                    }
                    assertArrayEquals(large, c.call(RdmaRpcTest.ECHO_BYTES, large));
                    return null;
                }));
            }
            for (Future<?> f : calls) {
                f.get(120, TimeUnit.SECONDS);
            }
            long peak = serverT.devices().registeredBytes();
            assertEquals(50, burst.size());
            for (RpcClient c : burst) {
                c.close();
            }
            long closed = System.nanoTime();
            long deadline = closed + idleRelease.toNanos() + TimeUnit.SECONDS.toNanos(10);
            while (serverT.devices().registeredBytes() > baseline && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            long back = System.nanoTime() - closed;
            long now = serverT.devices().registeredBytes();
            System.out.println("server registered bytes: baseline " + baseline + ", after the burst " + peak + ", "
                    + now + " after " + TimeUnit.NANOSECONDS.toMillis(back) + " ms (idleRelease " + idleRelease.toMillis()
                    + " ms); trimmed " + serverT.bufferPool().trimmedBytes() + ", slabs " + serverT.bufferPool().slabCount());
            assertTrue(peak >= baseline + (30L << 20), "the burst registered more: " + peak + " vs " + baseline);
            assertEquals(baseline, now, "registered bytes back to the baseline");
            assertEquals(reserved0, serverT.bufferPool().reservedBytes(), "and the pool's memory with them");
            assertTrue(back >= idleRelease.toNanos(), "not before the idle time: " + back + " ns");
            assertArrayEquals(new byte[] {2}, resident.call(RdmaRpcTest.ECHO_BYTES, new byte[] {2}), "the resident is served");
        } finally {
            callers.shutdownNow();
            for (RpcClient c : burst) {
                c.close();
            }
        }
    }
}
