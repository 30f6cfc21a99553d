package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.transport.tls.TlsConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Checks that the MemorySegment call path allocates nothing per call in steady state, on both I/O
 * threads (client and server), by reading each thread's allocated-bytes counter
 * ({@code com.sun.management.ThreadMXBean}) around many round trips. This checks allocation, not
 * speed; throughput figures come from the benchmarks.
 */
@Timeout(60)
class AllocationTest {
    static final dev.rdmarpc.rpc.Method<MemorySegment, MemorySegment> ECHO = dev.rdmarpc.rpc.Method.raw("echo");
    static final int CONCURRENCY = 16;

    /** Pipelined echo: each response sends the next request from the I/O thread until a budget is spent. */
    static final class Pump implements ResponseListener {
        final RpcChannel client;
        final MemorySegment payload;
        boolean inPlace;
        long remaining;
        int active;
        CountDownLatch done;
        final AtomicReference<RpcException> error = new AtomicReference<>();

        Pump(RpcChannel client, MemorySegment payload) {
            this.client = client;
            this.payload = payload;
        }

        void run(long calls) throws InterruptedException {
            done = new CountDownLatch(1);
            remaining = calls;
            active = CONCURRENCY;
            // Kick off from the client's I/O thread so every call of the run happens there.
            client.send(ECHO, payload, new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView response) {
                    for (int i = 0; i < CONCURRENCY; i++) {
                        remaining--;
                        assertTrue(send(Pump.this, i));
                    }
                }

                @Override
                public void onError(long tag, RpcException e) {
                    error.set(e);
                    done.countDown();
                }
            }, -1);
            assertTrue(done.await(30, TimeUnit.SECONDS), "pump finished");
            assertNull(error.get());
        }

        @Override
        public void onResponse(long tag, ResponseView r) {
            if (r.payloadLength() != payload.byteSize() || r.buffer().get(ValueLayout.JAVA_BYTE, r.payloadOffset()) != 42) {
                error.set(new RpcException(Status.PROTOCOL_ERROR, "bad echo"));
            }
            if (remaining > 0) {
                remaining--;
                send(this, tag);
            } else if (--active == 0) {
                done.countDown();
            }
        }

        @Override
        public void onError(long tag, RpcException e) {
            error.set(e);
            done.countDown();
        }

        boolean send(ResponseListener l, long tag) {
            return inPlace ? client.sendInPlace(ECHO, payload, l, tag) : client.send(ECHO, payload, l, tag);
        }
    }

    @Test
    void memorySegmentCallPathAllocatesNothingPerCall() throws Exception {
        double perCall = bytesPerEcho(128, false, false, 300_000, 200_000);
        assertTrue(perCall < 1.0, "expected ~0 B/call on the I/O threads, got " + perCall);
    }

    /** The same through a pool's channel: picking the least loaded connection allocates nothing either. */
    @Test
    void poolChannelCallPathAllocatesNothingPerCall() throws Exception {
        double perCall = bytesPerEcho(128, false, true, 300_000, 200_000);
        assertTrue(perCall < 1.0, "expected ~0 B/call on the I/O threads, got " + perCall);
    }

    /**
     * Large echoes in place both ways (the client writes from its segment, the server from the
     * request's receive buffer). rdmarpc's own code allocates nothing per call here (the
     * {@code ByteBuffer} views are cached), but the JDK does: a gathering write of buffers that
     * belong to memory segments allocates a releaser per buffer ({@code sun.nio.ch.IOUtil}), about
     * 40 bytes each. Measured at 16 calls in flight: 156 to 232 B/call in place, 277 B/call when the same
     * calls copy (a large buffer per frame). This bounds it, so that a real per-call allocation of
     * ours (an array, a view per call) adds up and shows.
     */
    @Test
    void inPlaceCallPathAllocatesOnlyNiosReleasers() throws Exception {
        double perCall = bytesPerEcho(128 * 1024, true, false, 20_000, 10_000);
        assertTrue(perCall < 400, "expected only NIO's releasers (about 160 B/call), got " + perCall);
    }

    /**
     * Over TLS (issue 18): the TLS wire uses only off-heap buffers, but the I/O threads allocate per
     * call: 731 B per 128 B echo and 20,629 B per 32 KiB echo, both sides together, when first
     * measured (the first is about what the JDK's {@code SSLEngine} allocates per wrap and unwrap;
     * the second, about a third of the payload per direction, is not yet attributed: the JDK's
     * cipher over direct buffers is the suspect). This bounds both at about twice that, so that a
     * new copy per call shows.
     */
    @Test
    void tlsCallPathAllocatesOnlyWhatTheJdksEngineDoes(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        TestCertificates certs = new TestCertificates(dir);
        java.nio.file.Path ca = certs.ca("alloc-ca");
        java.security.KeyStore keys = certs.key("alloc-server", "alloc-ca", "ip:127.0.0.1", null, 2);
        TlsConfig serverTls = TlsConfig.forServer(keys, TestCertificates.PASSWORD.toCharArray());
        TlsConfig clientTls = TlsConfig.forClient().trust(ca);
        double small = bytesPerEcho(128, false, false, 100_000, 50_000, serverTls, clientTls);
        double large = bytesPerEcho(32 * 1024, false, false, 20_000, 10_000, serverTls, clientTls);
        System.out.printf("TLS: %.0f B per 128 B echo, %.0f B per 32 KiB echo (three records each way)%n", small, large);
        assertTrue(small < 1_500 && large < 45_000, small + " / " + large);
    }

    private static double bytesPerEcho(int size, boolean inPlace, boolean pool, long warmupCalls, long calls) throws Exception {
        return bytesPerEcho(size, inPlace, pool, warmupCalls, calls, null, null);
    }

    /** Bytes the I/O threads of both sides allocate per echo of {@code size} bytes, after a warm-up (JIT, pool growth). */
    private static double bytesPerEcho(int size, boolean inPlace, boolean pool, long warmupCalls, long calls, TlsConfig serverTls,
            TlsConfig clientTls) throws Exception {
        try (RpcServer server = RpcServer.builder().tcp(cfg -> cfg.loop(l -> l.ioThreads(1)).tls(serverTls))
                .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength())).start();
             RpcClient client = RpcClient.builder().address(server.address()).tcp(cfg -> cfg.tls(clientTls)).connect();
             RpcClientPool clients = RpcClientPool.builder().maxConnectionsPerEndpoint(1).build();
             Arena arena = Arena.ofShared()) {
            Pump pump = new Pump(pool ? clients.channel(server.address()) : client, arena.allocate(size).fill((byte) 42));
            pump.inPlace = inPlace;
            pump.run(warmupCalls);
            long[] serverIo = threadIds("rdmarpc-server-");
            long[] clientIo = threadIds(pool ? "rdmarpc-pool-0" : "rdmarpc-client-"); // not the pool's reaper
            long before = allocated(serverIo) + allocated(clientIo);
            pump.run(calls);
            long after = allocated(serverIo) + allocated(clientIo);
            double perCall = (after - before) / (double) calls;
            System.out.printf("allocation, %d B%s%s: %d bytes on the I/O threads over %d calls = %.3f B/call%n", size,
                    inPlace ? " in place" : "", pool ? " through a pool" : "", after - before, calls, perCall);
            return perCall;
        }
    }

    private static long[] threadIds(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix))
                .mapToLong(Thread::threadId).toArray();
    }

    private static long allocated(long[] ids) throws Exception {
        // Reflection: the rpc module does not read java.management, and core reflection needs no read edge.
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        Method m = Class.forName("com.sun.management.ThreadMXBean").getMethod("getThreadAllocatedBytes", long[].class);
        long sum = 0;
        for (long b : (long[]) m.invoke(bean, (Object) ids)) {
            sum += b;
        }
        assertTrue(ids.length > 0);
        return sum;
    }
}
