package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codecs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A pool spreads its calls (issue 43, point 3): with 4 connections allowed, 48 callers (3 making
 * 8 MiB calls, 45 making 64 B ones) use all 4, and the small calls, which go to the connections with
 * the fewest request bytes outstanding, are not held behind the large frames: their P99 stays below
 * the large calls' median (in one of up to 3 rounds, for a loaded machine's sake). Bounded: 2 s of
 * calls a round, at most 2,000 per caller.
 */
@Timeout(120)
class PoolSpreadTcpTest {
    static final Method<byte[], byte[]> ECHO = Method.of("echo", Codecs.BYTES, Codecs.BYTES);
    static final int LARGE_CALLERS = 3;
    static final int SMALL_CALLERS = 45;

    @Test
    void smallCallsAreNotHeldBehindLargeOnes() throws Exception {
        try (RpcServer server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(2)))
                .maxFrameLength(16 << 20).register(ECHO, (ctx, b) -> b).start();
             RpcClientPool pool = RpcClientPool.builder().maxConnectionsPerEndpoint(4).maxFrameLength(16 << 20).build();
             ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
            InetSocketAddress ep = server.address();
            RpcChannel ch = pool.channel(ep);
            byte[] large = new byte[8 << 20];
            byte[] small = new byte[64];
            for (int i = 0; i < 3; i++) { // warm: the paths compiled, a connection open
                ch.call(ECHO, large, Duration.ofSeconds(30));
            }
            // Up to 3 rounds: on a shared, loaded machine one round's P99 may be set by the scheduler or a
            // collection rather than by the frames; the frames set it in every round when the small calls
            // share the large ones' connections (one connection: they queue behind 8 MiB frames each time)
            StringBuilder rounds = new StringBuilder();
            boolean below = false;
            for (int round = 0; round < 3 && !below; round++) {
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2000);
                List<Future<long[]>> largeRuns = new ArrayList<>();
                List<Future<long[]>> smallRuns = new ArrayList<>();
                for (int i = 0; i < LARGE_CALLERS; i++) {
                    largeRuns.add(callers.submit(() -> run(ch, large, end)));
                }
                for (int i = 0; i < SMALL_CALLERS; i++) {
                    smallRuns.add(callers.submit(() -> run(ch, small, end)));
                }
                long[] largeNanos = merge(largeRuns);
                long[] smallNanos = merge(smallRuns);
                assertEquals(4, pool.connections(ep), "the pool spreads 48 callers over the 4 connections it may open");
                assertTrue(largeNanos.length >= LARGE_CALLERS && smallNanos.length >= SMALL_CALLERS);
                long smallP99 = percentile(smallNanos, 0.99);
                long largeP50 = percentile(largeNanos, 0.50);
                String figures = String.format("round %d: %d small calls P50 %.2f ms P99 %.2f ms; %d large calls P50 %.2f ms",
                        round, smallNanos.length, percentile(smallNanos, 0.5) / 1e6, smallP99 / 1e6, largeNanos.length,
                        largeP50 / 1e6);
                System.out.println("pool spread " + figures);
                rounds.append(figures).append("; ");
                below = smallP99 < largeP50;
            }
            assertTrue(below, "small calls' P99 was not below the large calls' median in any round: " + rounds);
        }
    }

    /** Calls until {@code end} (2,000 calls at most); @return each call's latency */
    private static long[] run(RpcChannel ch, byte[] payload, long end) {
        long[] nanos = new long[2000];
        int n = 0;
        while (n < nanos.length && System.nanoTime() < end) {
            long t0 = System.nanoTime();
            byte[] back = ch.call(ECHO, payload, Duration.ofSeconds(30));
            nanos[n++] = System.nanoTime() - t0;
            assertEquals(payload.length, back.length);
        }
        return Arrays.copyOf(nanos, n);
    }

    private static long[] merge(List<Future<long[]>> runs) throws Exception {
        long[] all = new long[0];
        for (Future<long[]> f : runs) {
            long[] r = f.get(60, TimeUnit.SECONDS);
            int at = all.length;
            all = Arrays.copyOf(all, at + r.length);
            System.arraycopy(r, 0, all, at, r.length);
        }
        Arrays.sort(all);
        return all;
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }
}
