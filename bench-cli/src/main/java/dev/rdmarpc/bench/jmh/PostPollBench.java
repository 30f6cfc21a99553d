package dev.rdmarpc.bench.jmh;

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
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The verbs data path on a real device: an empty CQ poll, and post + poll round trips over an RC
 * connection between two devices of this host (in the Soft-RoCE VM: rxe0 and rxe1, named by
 * {@code RDMARPC_DEV0/1} with addresses {@code RDMARPC_ADDR0/1}). Work requests, SGEs and the
 * completion array are preallocated in this state; {@code -prof gc} should report 0 B/op for every
 * benchmark. Needs an RDMA device: run it in the VM,
 * {@code scripts/softroce-vm java ... -m dev.rdmarpc.bench/dev.rdmarpc.bench.BenchCli jmh PostPoll -prof gc}.
 *
 * <p>Under the VM's emulated CPU the times measure qemu's TCG and rxe's software transport, not the
 * library; the allocation figures hold anywhere.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PostPollBench {
    private static final int SIZE = 64;

    private Side a;
    private Side b;

    /** One end: device, PD, CQ, registered buffer, QP and batches. */
    static final class Side {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final Arena arena = Arena.ofShared();
        final MemoryRegion mr;
        final QueuePair qp;
        final SendWorkRequests sends = new SendWorkRequests(4, 1);
        final ReceiveWorkRequests recvs = new ReceiveWorkRequests(4, 1);
        final WorkCompletions wc = new WorkCompletions(16);
        final int gidIndex;

        Side(String device, String address) throws Exception {
            ctx = Context.open(device);
            pd = ctx.allocateProtectionDomain();
            cq = ctx.createCompletionQueue(256);
            MemorySegment buffer = arena.allocate(1 << 16, 4096);
            mr = pd.register(buffer, Access.LOCAL_REMOTE_READ_WRITE);
            qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq).maxInlineData(SIZE));
            gidIndex = ctx.gidFor(1, InetAddress.getByName(address)).index();
        }

        void close() {
            qp.close();
            mr.close();
            arena.close();
            cq.close();
            pd.close();
            ctx.close();
            sends.close();
            recvs.close();
            wc.close();
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }

    @Setup(Level.Trial)
    public void connect() throws Exception {
        a = new Side(env("RDMARPC_DEV0", "rxe0"), env("RDMARPC_ADDR0", "198.18.0.1"));
        b = new Side(env("RDMARPC_DEV1", "rxe1"), env("RDMARPC_ADDR1", "198.18.0.2"));
        QpEndpoint ea = a.qp.endpoint(1, a.gidIndex, 100);
        QpEndpoint eb = b.qp.endpoint(1, b.gidIndex, 200);
        a.qp.connect(new ConnectionAttributes().remote(eb).localPsn(100).sgidIndex(a.gidIndex));
        b.qp.connect(new ConnectionAttributes().remote(ea).localPsn(200).sgidIndex(b.gidIndex));
        a.sends.get(0).clear().wrId(1).send(a.mr, 0, SIZE).signaled(true);
        a.sends.get(1).clear().wrId(2).write(a.mr, 0, SIZE, b.mr.address(), b.mr.rkey()).signaled(true);
        a.sends.get(2).clear().wrId(3).send(a.mr, 0, SIZE).signaled(true).inline(true);
        b.recvs.get(0).wrId(9).buffer(b.mr, 0, SIZE);
    }

    @TearDown(Level.Trial)
    public void close() {
        b.close();
        a.close();
    }

    private static int awaitOne(Side s) {
        int n;
        while ((n = s.cq.poll(s.wc, 1)) == 0) {
            Thread.onSpinWait();
        }
        if (!s.wc.isSuccess(0)) {
            throw new IllegalStateException(s.wc.describe(0));
        }
        return n;
    }

    /** One poll of an empty completion queue: the floor of a poll loop. */
    @Benchmark
    public int emptyPoll() {
        return a.cq.poll(a.wc, 16);
    }

    /** Post a receive on b, post a signaled 64-byte SEND on a, poll both completions. */
    @Benchmark
    public long sendRoundTrip() {
        if (b.qp.postReceive(b.recvs, 0, 1) != 0 || a.qp.postSend(a.sends, 0, 1) != 0) {
            throw new IllegalStateException("post failed");
        }
        return awaitOne(a) + awaitOne(b) + b.wc.byteLength(0);
    }

    /** The same with the 64 bytes inline in the work request. */
    @Benchmark
    public long inlineSendRoundTrip() {
        if (b.qp.postReceive(b.recvs, 0, 1) != 0 || a.qp.postSend(a.sends, 2, 1) != 0) {
            throw new IllegalStateException("post failed");
        }
        return awaitOne(a) + awaitOne(b) + b.wc.byteLength(0);
    }

    /** Post a signaled 64-byte RDMA WRITE on a, poll its completion. */
    @Benchmark
    public long writeRoundTrip() {
        if (a.qp.postSend(a.sends, 1, 1) != 0) {
            throw new IllegalStateException("post failed");
        }
        return awaitOne(a) + a.wc.wrId(0);
    }
}
