package dev.rdmarpc.ibverbs.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** One end of a test connection: device, PD, channel + CQ, registered buffer, QP and batches. */
final class RdmaSide implements AutoCloseable {
    static final int BUFFER = 1 << 16;

    final Context ctx;
    final ProtectionDomain pd;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final Arena arena = Arena.ofShared();
    final MemorySegment buffer;
    final MemoryRegion mr;
    final QueuePair qp;
    final SendWorkRequests sends = new SendWorkRequests(16, 4);
    final ReceiveWorkRequests recvs = new ReceiveWorkRequests(16, 2);
    final WorkCompletions wc = new WorkCompletions(32);
    final int gidIndex;
    final int psn;

    RdmaSide(String device, String address, int psn, Consumer<QueuePairInit> init) {
        ctx = Context.open(device);
        pd = ctx.allocateProtectionDomain();
        channel = ctx.createCompletionChannel();
        cq = ctx.createCompletionQueue(64, channel, 0);
        buffer = arena.allocate(BUFFER, 4096);
        mr = pd.register(buffer, Access.LOCAL_REMOTE_READ_WRITE);
        QueuePairInit qpInit = new QueuePairInit().completionQueue(cq).maxSendWr(32).maxRecvWr(32).maxSendSge(4)
                .maxRecvSge(2).maxInlineData(64);
        init.accept(qpInit);
        qp = pd.createQueuePair(qpInit);
        gidIndex = ctx.gidFor(1, RdmaDevices.address(address)).index();
        this.psn = psn;
    }

    QpEndpoint endpoint() {
        return qp.endpoint(1, gidIndex, psn);
    }

    ConnectionAttributes attributes(QpEndpoint remote) {
        return new ConnectionAttributes().remote(remote).localPsn(psn).sgidIndex(gidIndex);
    }

    /** Busy-polls until {@code n} completions arrived (or 20 s passed) and returns their descriptions. */
    List<String> await(int n) {
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (got.size() < n) {
            int k = cq.poll(wc, Math.min(wc.capacity(), n - got.size()));
            for (int i = 0; i < k; i++) {
                got.add(wc.describe(i));
            }
            if (k == 0) {
                if (System.nanoTime() - deadline > 0) {
                    fail("waited 20 s for " + n + " completions on " + ctx.name() + ", got " + got);
                }
                Thread.onSpinWait();
            }
        }
        return got;
    }

    /** Polls exactly one completion (busy, 20 s at most); its fields stay readable at index 0 of {@link #wc}. */
    void awaitOne() {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (cq.poll(wc, 1) == 0) {
            if (System.nanoTime() - deadline > 0) {
                fail("waited 20 s for a completion on " + ctx.name());
            }
            Thread.onSpinWait();
        }
    }

    /** Asserts that completion 0 of {@link #wc} succeeded with the opcode and wr id. */
    void expect(WcOpcode opcode, long wrId) {
        assertEquals(WcStatus.SUCCESS, wc.status(0), wc.describe(0));
        assertEquals(opcode, wc.opcode(0), wc.describe(0));
        assertEquals(wrId, wc.wrId(0), wc.describe(0));
    }

    @Override
    public void close() {
        qp.close();
        mr.close();
        arena.close();
        cq.close();
        channel.close();
        pd.close();
        ctx.close();
        sends.close();
        recvs.close();
        wc.close();
    }
}
