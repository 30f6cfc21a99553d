package dev.rdmarpc.rpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.testsupport.RdmaTest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The MemorySegment call path over RDMA allocates nothing per call in steady state, on the RDMA I/O
 * threads of both sides: each thread's allocated-bytes counter ({@code com.sun.management.ThreadMXBean})
 * is read around many pipelined round trips driven from the client's I/O thread. This checks
 * allocation, not speed. (In the VM, run it with C2 available: C1 alone does no escape analysis.)
 */
@RdmaTest
@Timeout(900)
class RdmaAllocationTest {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("echo");
    static final int CONCURRENCY = 16;

    /** Pipelined echo: each response sends the next request from the I/O thread until a budget is spent. */
    static final class Pump implements ResponseListener {
        final RpcClient client;
        final MemorySegment payload;
        long remaining;
        int active;
        CountDownLatch done;
        final AtomicReference<RpcException> error = new AtomicReference<>();

        Pump(RpcClient client, MemorySegment payload) {
            this.client = client;
            this.payload = payload;
        }

        void run(long calls) throws InterruptedException {
            done = new CountDownLatch(1);
            remaining = calls;
            active = CONCURRENCY;
            client.send(ECHO, payload, new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView response) {
                    for (int i = 0; i < CONCURRENCY; i++) {
                        remaining--;
                        assertTrue(client.send(ECHO, payload, Pump.this, i));
                    }
                }

                @Override
                public void onError(long tag, RpcException e) {
                    error.set(e);
                    done.countDown();
                }
            }, -1);
            assertTrue(done.await(600, TimeUnit.SECONDS), "pump finished");
            assertNull(error.get());
        }

        @Override
        public void onResponse(long tag, ResponseView r) {
            if (r.payloadLength() != payload.byteSize() || r.buffer().get(ValueLayout.JAVA_BYTE, r.payloadOffset()) != 42) {
                error.set(new RpcException(Status.PROTOCOL_ERROR, "bad echo"));
            }
            if (remaining > 0) {
                remaining--;
                client.send(ECHO, payload, this, tag);
            } else if (--active == 0) {
                done.countDown();
            }
        }

        @Override
        public void onError(long tag, RpcException e) {
            error.set(e);
            done.countDown();
        }
    }

    @Test
    void memorySegmentCallPathAllocatesNothingPerCallOverRdma() throws Exception {
        try (RdmaTransport serverT = RdmaTransport.create(RdmaTestEnv.smallConfig().threadNamePrefix("alloc-server"));
             RdmaTransport clientT = RdmaTransport.create(RdmaTestEnv.smallConfig().threadNamePrefix("alloc-client"));
             RpcServer server = RpcServer.builder().bind(RdmaTestEnv.serverBind()).transport(serverT)
                     .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength())).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect();
             Arena arena = Arena.ofShared()) {
            MemorySegment payload = arena.allocate(128).fill((byte) 42);
            Pump pump = new Pump(client, payload);
            long warmup = Long.getLong("rdmarpc.test.allocWarmup", 60_000);
            long calls = Long.getLong("rdmarpc.test.allocCalls", 30_000);
            pump.run(warmup); // JIT, pool growth, receive-queue growth
            long[] io = threadIds();
            long before = allocated(io);
            long t0 = System.nanoTime();
            pump.run(calls);
            long after = allocated(io);
            double perCall = (after - before) / (double) calls;
            System.out.printf("allocation over RDMA: %d bytes on %d I/O threads over %d calls = %.3f B/call (%d ms)%n",
                    after - before, io.length, calls, perCall, (System.nanoTime() - t0) / 1_000_000);
            System.out.println("client " + clientT.metrics());
            System.out.println("server " + serverT.metrics());
            assertTrue(perCall < 1.0, "expected ~0 B/call on the RDMA I/O threads, got " + perCall);
        }
    }

    private static long[] threadIds() {
        long[] ids = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().matches("alloc-(server|client)-\\d+"))
                .mapToLong(Thread::threadId).toArray();
        assertTrue(ids.length == 2, "two RDMA I/O threads, found " + ids.length);
        return ids;
    }

    private static long allocated(long[] ids) throws Exception {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method m = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getThreadAllocatedBytes", long[].class);
        long sum = 0;
        for (long b : (long[]) m.invoke(bean, (Object) ids)) {
            sum += b;
        }
        return sum;
    }
}
