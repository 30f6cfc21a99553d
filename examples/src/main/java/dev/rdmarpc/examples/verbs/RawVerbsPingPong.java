package dev.rdmarpc.examples.verbs;

import dev.rdmarpc.ibverbs.verbs.Access;
import dev.rdmarpc.ibverbs.verbs.CompletionQueue;
import dev.rdmarpc.ibverbs.verbs.ConnectionAttributes;
import dev.rdmarpc.ibverbs.verbs.Context;
import dev.rdmarpc.ibverbs.verbs.MemoryRegion;
import dev.rdmarpc.ibverbs.verbs.ProtectionDomain;
import dev.rdmarpc.ibverbs.verbs.QpEndpoint;
import dev.rdmarpc.ibverbs.verbs.QueuePair;
import dev.rdmarpc.ibverbs.verbs.QueuePairInit;
import dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests;
import dev.rdmarpc.ibverbs.verbs.SendWorkRequests;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The smallest complete program on the raw verbs layer, with no connection manager: two reliable
 * queue pairs in one process, one on each of two RDMA devices (or both on one), connected by handing
 * each the other's {@link QpEndpoint} (QP number, PSN, GID; what two processes would exchange over a
 * socket), then one SEND and one RDMA WRITE from A to B.
 *
 * <pre>
 * examples/run verbs rxe0 198.18.0.1 rxe1 198.18.0.2
 * </pre>
 *
 * The addresses pick each port's RoCE v2 GID. Every resource is closed in reverse order of opening
 * by try-with-resources. Exit code 0 when B saw both messages intact.
 */
public final class RawVerbsPingPong {
    private static final int BUFFER = 4096;

    private RawVerbsPingPong() {
    }

    public static void main(String[] args) {
        int exit;
        try {
            exit = run(args, System.out);
        } catch (Exception e) { // no such device, no GID for the address, a failed verbs call: say which
            System.err.println("RawVerbsPingPong: " + e);
            exit = 1;
        }
        System.exit(exit);
    }

    /** One side: a device, its domain, completion queue, queue pair and one registered buffer. */
    private record Side(Context context, ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemorySegment buffer,
                        MemoryRegion mr, int gidIndex, int psn) implements AutoCloseable {
        static Side open(String device, InetAddress address, int psn, Arena arena) {
            Context context = Context.open(device);
            ProtectionDomain pd = context.allocateProtectionDomain();
            CompletionQueue cq = context.createCompletionQueue(16);
            QueuePair qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq).maxSendWr(4).maxRecvWr(4));
            MemorySegment buffer = arena.allocate(BUFFER, 4096);
            MemoryRegion mr = pd.register(buffer, Access.LOCAL_REMOTE_READ_WRITE);
            int gidIndex = context.gidFor(1, address).index();
            return new Side(context, pd, cq, qp, buffer, mr, gidIndex, psn);
        }

        QpEndpoint endpoint() {
            return qp.endpoint(1, gidIndex, psn);
        }

        /** RESET, INIT, RTR, RTS towards {@code peer}. */
        void connectTo(QpEndpoint peer) {
            qp.connect(new ConnectionAttributes().remote(peer).localPsn(psn).sgidIndex(gidIndex));
        }

        /** Busy-polls one completion (at most 30 s) and fails unless it succeeded. */
        void awaitOne(WorkCompletions wc, String what) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (cq.poll(wc, 1) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no completion for " + what + " within 30 s");
                }
                Thread.onSpinWait();
            }
            if (!wc.isSuccess(0)) {
                throw new IllegalStateException(what + " failed: " + wc.describe(0));
            }
        }

        @Override
        public void close() {
            mr.close();
            qp.close();
            cq.close();
            pd.close();
            context.close();
        }
    }

    /** Runs the example, printing to {@code out}; returns the exit code. */
    public static int run(String[] args, PrintStream out) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: RawVerbsPingPong <device A> <address A> <device B> <address B>");
            return 2;
        }
        byte[] hello = "hello over SEND".getBytes(StandardCharsets.US_ASCII);
        byte[] written = "and this by RDMA WRITE".getBytes(StandardCharsets.US_ASCII);
        try (Arena arena = Arena.ofShared();
             Side a = Side.open(args[0], InetAddress.getByName(args[1]), 0x1000, arena);
             Side b = Side.open(args[2], InetAddress.getByName(args[3]), 0x2000, arena);
             SendWorkRequests sends = new SendWorkRequests(1, 1);
             ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
             WorkCompletions wc = new WorkCompletions(1)) {
            a.connectTo(b.endpoint());
            b.connectTo(a.endpoint());
            out.println("connected: A " + a.endpoint() + " <-> B " + b.endpoint());

            // SEND: B posts a receive for it first
            receives.get(0).wrId(1).buffer(b.mr(), 0, 256);
            check(b.qp().postReceive(receives, 1), "post receive");
            MemorySegment.copy(hello, 0, a.buffer(), JAVA_BYTE, 0, hello.length);
            sends.get(0).clear().wrId(2).send(a.mr(), 0, hello.length).signaled(true);
            check(a.qp().postSend(sends, 1), "post send");
            a.awaitOne(wc, "SEND");
            b.awaitOne(wc, "RECV");
            String received = new String(b.buffer().asSlice(0, wc.byteLength(0)).toArray(JAVA_BYTE),
                    StandardCharsets.US_ASCII);
            out.println("SEND: B received \"" + received + "\" (" + wc.byteLength(0) + " bytes)");

            // RDMA WRITE: into B's buffer at offset 1024, named by B's address and rkey; B's CPU takes no part
            MemorySegment.copy(written, 0, a.buffer(), JAVA_BYTE, 512, written.length);
            sends.get(0).clear().wrId(3).write(a.mr(), 512, written.length, b.mr().address(1024, written.length),
                    b.mr().rkey()).signaled(true);
            check(a.qp().postSend(sends, 1), "post send");
            a.awaitOne(wc, "RDMA WRITE");
            String landed = new String(b.buffer().asSlice(1024, written.length).toArray(JAVA_BYTE),
                    StandardCharsets.US_ASCII);
            out.println("RDMA WRITE: B's memory now holds \"" + landed + "\"");
            boolean ok = received.equals(new String(hello, StandardCharsets.US_ASCII))
                    && landed.equals(new String(written, StandardCharsets.US_ASCII));
            out.println(ok ? "OK" : "MISMATCH");
            return ok ? 0 : 1;
        }
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": errno " + rc);
        }
    }
}
