package dev.rdmarpc.examples.verbs;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.ConnectionAttributes;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * perftest's {@code ib_send_lat} on this project's verbs layer, in one process: a ping-pong of SENDs
 * between two reliable queue pairs (one per device, connected by handing each the other's endpoint,
 * as {@link RawVerbsPingPong} does), each side on its own thread busy-polling its completion queue,
 * messages sent inline when they fit, each echoed from where it landed and its number checked on
 * return. It prints what {@code ib_send_lat} prints: the typical (median)
 * and average one-way latency, half of each measured round trip, in microseconds.
 *
 * <pre>
 * examples/run send-lat rxe0 198.18.0.1 rxe1 198.18.0.2 [size 128] [iterations 1000] [warm-up seconds 0]
 * </pre>
 *
 * Beside {@code ib_send_lat} on the same link it separates what Java and the FFM bindings cost from
 * what the RPC layers above them cost: the RPC's own round trip is the third figure
 * ({@code scripts/rdma-bench} runs all three). Under an emulated CPU the JIT needs the warm-up
 * before the round trip is compiled code.
 */
public final class SendLatency {
    private static final long RECV = 1L << 32;
    private static final int DEPTH = 16;

    private SendLatency() {
    }

    public static void main(String[] args) {
        int exit;
        try {
            exit = run(args, System.out);
        } catch (Exception e) {
            System.err.println("SendLatency: " + e);
            exit = 1;
        }
        System.exit(exit);
    }

    /** One side: a device, its domain, one completion queue for both directions, a queue pair, a buffer. */
    private record Side(Context context, ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemorySegment buffer,
                        MemoryRegion mr, int gidIndex, int psn, int size, boolean inline,
                        SendWorkRequests sends, ReceiveWorkRequests receives, WorkCompletions wc, int[] unreaped)
            implements AutoCloseable {

        static Side open(String device, InetAddress address, int psn, int size, Arena arena) {
            Context context = Context.open(device);
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue cq = context.createCompletionQueue(4 * DEPTH);
            int inlineBytes = size <= 220 ? size : 0;
            QueuePair qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq).maxSendWr(DEPTH).maxRecvWr(DEPTH)
                    .maxInlineData(inlineBytes));
            MemorySegment buffer = arena.allocate(2L * size, 4096);
            MemoryRegion mr = pd.register(buffer, Access.LOCAL_REMOTE_READ_WRITE);
            int gidIndex = context.gidFor(1, address).index();
            return new Side(context, pd, cq, qp, buffer, mr, gidIndex, psn, size, inlineBytes > 0,
                    new SendWorkRequests(1, 1), new ReceiveWorkRequests(1, 1), new WorkCompletions(DEPTH), new int[1]);
        }

        void connectTo(Side peer) {
            qp.connect(new ConnectionAttributes().remote(peer.qp.endpoint(1, peer.gidIndex, peer.psn)).localPsn(psn)
                    .sgidIndex(gidIndex));
        }

        void postReceive() {
            receives.get(0).wrId(RECV).buffer(mr, size, size);
            check(qp.postReceive(receives, 1), "post receive");
        }

        /**
         * Sends one message from {@code offset}, signaled: its completion is reaped by {@link #awaitReceive}, or here first
         * when the send queue is full of them.
         */
        void send(long offset, long deadline) {
            while (unreaped[0] == DEPTH) {
                poll(deadline);
            }
            sends.get(0).clear().wrId(1).send(mr, offset, size).signaled(true).inline(inline);
            check(qp.postSend(sends, 1), "post send");
            unreaped[0]++;
        }

        /** Busy-polls until a receive completes (send completions on the way are reaped); reposts it. */
        void awaitReceive(long deadline) {
            while (!poll(deadline)) {
                Thread.onSpinWait();
            }
            postReceive();
        }

        /** One poll of the queue: whether it completed a receive. */
        private boolean poll(long deadline) {
            int n = cq.poll(wc, DEPTH);
            boolean received = false;
            for (int i = 0; i < n; i++) {
                if (!wc.isSuccess(i)) {
                    throw new IllegalStateException("completion failed: " + wc.describe(i));
                }
                if (wc.wrId(i) == RECV) {
                    received = true;
                } else {
                    unreaped[0]--;
                }
            }
            if (n == 0 && System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no completion within 30 s");
            }
            return received;
        }

        @Override
        public void close() {
            wc.close();
            receives.close();
            sends.close();
            mr.close();
            qp.close();
            cq.close();
            pd.close();
            context.close();
        }
    }

    /** Runs the measurement, printing to {@code out}; returns the exit code. */
    public static int run(String[] args, PrintStream out) throws Exception {
        if (args.length < 4 || args.length > 7) {
            System.err.println("usage: SendLatency <device A> <address A> <device B> <address B> [size] [iterations]"
                    + " [warm-up seconds]");
            return 2;
        }
        int size = args.length > 4 ? Integer.parseInt(args[4]) : 128;
        int iterations = args.length > 5 ? Integer.parseInt(args[5]) : 1000;
        double warmupSeconds = args.length > 6 ? Double.parseDouble(args[6]) : 0;
        if (size < 1 || iterations < 1 || warmupSeconds < 0) {
            System.err.println("SendLatency: size and iterations must be positive, the warm-up not negative");
            return 2;
        }
        try (Arena arena = Arena.ofShared();
             Side a = Side.open(args[0], InetAddress.getByName(args[1]), 0x1000, size, arena);
             Side b = Side.open(args[2], InetAddress.getByName(args[3]), 0x2000, size, arena)) {
            a.connectTo(b);
            b.connectTo(a);
            for (int i = 0; i < 2; i++) {
                a.postReceive();
                b.postReceive();
            }
            long warmupNanos = (long) (warmupSeconds * 1e9);
            // B answers every message until A's last one; A counts how many that is once the warm-up is over
            AtomicReference<Throwable> echoFailure = new AtomicReference<>();
            AtomicLong total = new AtomicLong(-1);
            Thread echo = new Thread(() -> {
                try {
                    for (long n = 0; total.get() < 0 || n < total.get(); n++) {
                        long deadline = System.nanoTime() + 30_000_000_000L;
                        b.awaitReceive(deadline);
                        // what it received, from where it landed: the next message lands there only after A has this one
                        b.send(size, deadline);
                    }
                } catch (Throwable t) {
                    echoFailure.set(t);
                }
            }, "send-lat-echo");
            echo.setDaemon(true);
            echo.start();
            long[] rtt = new long[iterations];
            long warmups = 0;
            long warmupEnd = System.nanoTime() + warmupNanos;
            try {
                while (System.nanoTime() - warmupEnd < 0) {
                    long deadline = System.nanoTime() + 30_000_000_000L;
                    ping(a, warmups, deadline);
                    warmups++;
                }
                total.set(warmups + iterations); // B reads it after the next message, which A sends after this
                for (int i = 0; i < iterations; i++) {
                    long t0 = System.nanoTime();
                    ping(a, warmups + i, t0 + 30_000_000_000L);
                    rtt[i] = System.nanoTime() - t0;
                }
            } catch (IllegalStateException e) {
                Throwable f = echoFailure.get();
                throw f != null ? new IllegalStateException("the echo side failed: " + f, f) : e;
            }
            echo.join(30_000);
            Arrays.sort(rtt);
            double typical = rtt[iterations / 2] / 2e3;
            double avg = Arrays.stream(rtt).average().orElse(0) / 2e3;
            double p99 = rtt[Math.min(iterations - 1, (int) (iterations * 0.99))] / 2e3;
            out.printf("send-lat %d B x %d (after %d warm-up round trips, %.0f s), inline %s: typical %.2f us avg %.2f us"
                    + " min %.2f us p99 %.2f us (one way: half the round trip)%n", size, iterations, warmups,
                    warmupSeconds, a.inline, typical, avg, rtt[0] / 2e3, p99);
            return 0;
        }
    }

    /** One round trip from A: message {@code n} out, and back unchanged (its first 8 bytes are checked). */
    private static void ping(Side a, long n, long deadline) {
        boolean numbered = a.size >= Long.BYTES;
        if (numbered) {
            a.buffer.set(JAVA_LONG_UNALIGNED, 0, n);
        }
        a.send(0, deadline);
        a.awaitReceive(deadline);
        if (numbered && a.buffer.get(JAVA_LONG_UNALIGNED, a.size) != n) {
            throw new IllegalStateException("message " + n + " came back as " + a.buffer.get(JAVA_LONG_UNALIGNED, a.size));
        }
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": errno " + rc);
        }
    }
}
