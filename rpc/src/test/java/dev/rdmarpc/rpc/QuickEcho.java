package dev.rdmarpc.rpc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * A bounded development throughput loop (not a test, not a benchmark claim): an in-process raw echo
 * at a fixed concurrency over loopback TCP. Usage: QuickEcho [size] [concurrency] [seconds] [mode]
 * where mode is "server", "client HOST:PORT" or absent (both in one process).
 */
public final class QuickEcho {
    static final Method<MemorySegment, MemorySegment> ECHO = Method.raw("echo");
    static final java.time.Duration SPIN = java.time.Duration.ofNanos(Long.getLong("spin", 0));
    static final dev.rdmarpc.rpc.transport.IdleStrategy IDLE = SPIN.isZero()
            ? dev.rdmarpc.rpc.transport.IdleStrategy.event() : dev.rdmarpc.rpc.transport.IdleStrategy.backOff(SPIN);

    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 128;
        int conc = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        String mode = args.length > 3 ? args[3] : "both";
        RpcServer server = null;
        InetSocketAddress addr;
        if (!mode.startsWith("client")) {
            server = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", mode.equals("server") ? 7777 : 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1).idleStrategy(IDLE)))
                    .registerRaw(ECHO, c -> c.respond(c.buffer(), c.payloadOffset(), c.payloadLength())).start();
            addr = server.address();
            if (mode.equals("server")) {
                Thread.sleep(seconds * 1000L + 30_000);
                server.close();
                return;
            }
        } else {
            String[] hp = args[4].split(":");
            addr = new InetSocketAddress(hp[0], Integer.parseInt(hp[1]));
        }
        try (RpcClient client = RpcClient.builder().address(addr).tcp(cfg -> cfg.loop(l -> l.idleStrategy(IDLE))).connect(); Arena arena = Arena.ofShared()) {
            MemorySegment payload = arena.allocate(size);
            long[] done = new long[1];
            boolean[] stopFlag = new boolean[1];
            java.util.concurrent.CountDownLatch drained = new java.util.concurrent.CountDownLatch(conc);
            ResponseListener l = new ResponseListener() {

                @Override
                public void onResponse(long tag, ResponseView response) {
                    done[0]++;
                    if (stopFlag[0] || !client.send(ECHO, payload, this, tag)) {
                        drained.countDown();
                    }
                }

                @Override
                public void onError(long tag, RpcException error) {
                    System.err.println(error);
                }
            };
            for (int i = 0; i < conc; i++) {
                client.send(ECHO, payload, l, i);
            }
            long start = System.nanoTime();
            long last = done[0];
            for (int s = 0; s < seconds; s++) {
                Thread.sleep(1000);
                long now = done[0];
                System.out.printf("%d: %,d QPS%n", s, now - last);
                last = now;
            }
            long total = done[0];
            double secs = (System.nanoTime() - start) / 1e9;
            client.send(ECHO, payload, new ResponseListener() {
                @Override
                public void onResponse(long tag, ResponseView response) {
                    stopFlag[0] = true; // set on the I/O thread, read there
                }

                @Override
                public void onError(long tag, RpcException error) {
                }
            }, -1);
            drained.await(5, java.util.concurrent.TimeUnit.SECONDS);
            System.out.printf("size=%d conc=%d avg %,.0f QPS over %.1fs%n", size, conc, total / secs, secs);
        }
        if (server != null) {
            server.close();
        }
    }
}
