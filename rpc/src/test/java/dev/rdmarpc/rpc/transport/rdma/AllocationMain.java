package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcClient;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcServer;
import dev.rdmarpc.rpc.Status;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The measurement of {@link RdmaAllocationTest}, in a JVM of its own (so that C2 and its escape
 * analysis are there whatever flags the test JVM got): pipelined echo calls over RDMA driven from
 * the client's I/O thread, the allocated bytes of both RDMA I/O threads read around the measured
 * calls. Prints {@code ALLOC <bytes> <calls>}. Uses nothing of JUnit.
 */
public final class AllocationMain {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("echo");
    static final int CONCURRENCY = 16;

    private AllocationMain() {
    }

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
                        if (!client.send(ECHO, payload, Pump.this, i)) {
                            error.set(new RpcException(Status.OVERLOADED, "send refused"));
                        }
                    }
                }

                @Override
                public void onError(long tag, RpcException e) {
                    error.set(e);
                    done.countDown();
                }
            }, -1);
            if (!done.await(600, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the pump did not finish");
            }
            if (error.get() != null) {
                throw error.get();
            }
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

    /** @param args server address, warm-up calls, measured calls */
    public static void main(String[] args) throws Exception {
        long warmup = Long.parseLong(args[1]);
        long calls = Long.parseLong(args[2]);
        RdmaConfig config = new RdmaConfig()
                .bufferPool(p -> p.slabSize(4L << 20).maxPooledBytes(64L << 20).maxLargeBytes(64L << 20))
                .timeouts(t -> t.handshake(java.time.Duration.ofMinutes(2)));
        try (RdmaTransport serverT = RdmaTransport.create(config.copy().threadNamePrefix("alloc-server"));
             RdmaTransport clientT = RdmaTransport.create(config.copy().threadNamePrefix("alloc-client"));
             RpcServer server = RpcServer.builder().bind(new InetSocketAddress(args[0], 0)).transport(serverT)
                     .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength())).start();
             RpcClient client = RpcClient.builder().address(server.address()).transport(clientT).connect();
             Arena arena = Arena.ofShared()) {
            MemorySegment payload = arena.allocate(128).fill((byte) 42);
            Pump pump = new Pump(client, payload);
            pump.run(warmup); // JIT, pool growth
            long[] io = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().matches("alloc-(server|client)-\\d+"))
                    .mapToLong(Thread::threadId).toArray();
            if (io.length != 2) {
                throw new IllegalStateException("expected two RDMA I/O threads, found " + io.length);
            }
            // Three windows: an allocation on every call shows in each; a one-off (a JIT deoptimisation
            // under the VM's slow compilers, seen once as 476 KB in a window) shows in one, and the
            // least of the three is reported.
            long least = Long.MAX_VALUE;
            StringBuilder windows = new StringBuilder();
            long t0 = System.nanoTime();
            for (int w = 0; w < 3; w++) {
                long before = allocated(io);
                pump.run(calls);
                long bytes = allocated(io) - before;
                windows.append(w == 0 ? "" : ", ").append(bytes);
                least = Math.min(least, bytes);
            }
            System.out.println("client " + clientT.metrics());
            System.out.println("server " + serverT.metrics());
            System.out.println("measured in " + (System.nanoTime() - t0) / 1_000_000 + " ms, bytes per window of "
                    + calls + " calls: " + windows);
            System.out.println("ALLOC " + least + " " + calls);
        }
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
