package dev.rdmarpc.ibverbs;

import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_context_ops;
import dev.rdmarpc.ibverbs.raw.ibv_cq;
import dev.rdmarpc.ibverbs.raw.ibv_port_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp;
import dev.rdmarpc.ibverbs.raw.ibv_recv_wr;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;
import dev.rdmarpc.ibverbs.raw.ibv_srq;
import dev.rdmarpc.ibverbs.raw.ibv_wc;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.ibverbs.raw.verbs_context;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The inline data path without an RDMA device: fake verbs objects in native memory whose
 * {@code ops} table points at libc functions that ignore their arguments ({@code getpagesize} in
 * every slot, {@code getpid} in the slot under test). Each inline must dispatch through its own
 * slot, found at the generated offsets, and must not allocate.
 */
class VerbsInlineTest {
    private static final Linker LINKER = Linker.nativeLinker();
    private static MemorySegment getpagesize;
    private static MemorySegment getpid;
    private static int pageSize;
    private static int pid;

    private Arena arena;
    private MemorySegment vctx;
    private MemorySegment context;
    private MemorySegment ops;
    private MemorySegment qp;
    private MemorySegment srq;
    private MemorySegment cq;

    @BeforeAll
    static void libc() throws Throwable {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
        getpagesize = LINKER.defaultLookup().find("getpagesize").orElseThrow();
        getpid = LINKER.defaultLookup().find("getpid").orElseThrow();
        MethodHandle noArgInt = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT));
        pageSize = (int) noArgInt.invokeExact(getpagesize);
        pid = (int) noArgInt.invokeExact(getpid);
        assumeTrue(pid != pageSize, "pid equals the page size; the slot test cannot tell them apart");
    }

    @BeforeEach
    void fakeVerbsObjects() {
        arena = Arena.ofConfined();
        vctx = verbs_context.allocate(arena);
        context = vctx.asSlice(verbs_context.context$offset(), ibv_context.sizeof());
        ops = ibv_context.ops(context);
        for (long off = 0; off < ops.byteSize(); off += ADDRESS.byteSize()) {
            ops.set(ADDRESS, off, getpagesize);
        }
        qp = ibv_qp.allocate(arena);
        ibv_qp.context(qp, context);
        srq = ibv_srq.allocate(arena);
        ibv_srq.context(srq, context);
        cq = ibv_cq.allocate(arena);
        ibv_cq.context(cq, context);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    private void slot(long opsOffset) {
        ops.set(ADDRESS, opsOffset, getpid);
    }

    @Test
    void postSendCallsOpsPostSend() {
        MemorySegment wr = ibv_send_wr.allocate(arena);
        MemorySegment bad = arena.allocate(ADDRESS);
        assertEquals(pageSize, VerbsInline.ibv_post_send(qp, wr, bad));
        slot(ibv_context_ops.post_send$offset());
        assertEquals(pid, VerbsInline.ibv_post_send(qp, wr, bad));
    }

    @Test
    void postRecvCallsOpsPostRecv() {
        MemorySegment wr = ibv_recv_wr.allocate(arena);
        MemorySegment bad = arena.allocate(ADDRESS);
        slot(ibv_context_ops.post_recv$offset());
        assertEquals(pid, VerbsInline.ibv_post_recv(qp, wr, bad));
        assertEquals(pageSize, VerbsInline.ibv_post_send(qp, ibv_send_wr.allocate(arena), bad));
    }

    @Test
    void postSrqRecvCallsOpsPostSrqRecv() {
        MemorySegment wr = ibv_recv_wr.allocate(arena);
        MemorySegment bad = arena.allocate(ADDRESS);
        slot(ibv_context_ops.post_srq_recv$offset());
        assertEquals(pid, VerbsInline.ibv_post_srq_recv(srq, wr, bad));
        assertEquals(pageSize, VerbsInline.ibv_post_recv(qp, wr, bad));
    }

    @Test
    void pollCqCallsOpsPollCqAndChecksRoom() {
        MemorySegment wc = ibv_wc.allocateArray(4, arena);
        slot(ibv_context_ops.poll_cq$offset());
        assertEquals(pid, VerbsInline.ibv_poll_cq(cq, 4, wc));
        assertThrows(IndexOutOfBoundsException.class, () -> VerbsInline.ibv_poll_cq(cq, 5, wc));
        assertThrows(IndexOutOfBoundsException.class, () -> VerbsInline.ibv_poll_cq(cq, -1, wc));
    }

    @Test
    void reqNotifyCqCallsOpsReqNotifyCq() {
        slot(ibv_context_ops.req_notify_cq$offset());
        assertEquals(pid, VerbsInline.ibv_req_notify_cq(cq, 0));
        assertEquals(pageSize, VerbsInline.ibv_poll_cq(cq, 0, MemorySegment.NULL));
    }

    @Test
    void queryPortUsesTheVerbsContextOpOfAnExtendedContext() {
        MemorySegment attr = ibv_port_attr.allocate(arena);
        ibv_context.abi_compat(context, ibverbs_h.__VERBS_ABI_IS_EXTENDED());
        verbs_context.sz(vctx, verbs_context.sizeof());
        verbs_context.query_port(vctx, getpid);
        assertEquals(getpid.address(), VerbsInline.queryPortOp(context).address());
        assertEquals(pid, VerbsInline.ibv_query_port(context, (byte) 1, attr));
        assertThrows(IndexOutOfBoundsException.class,
                () -> VerbsInline.ibv_query_port(context, (byte) 1, attr.asSlice(0, 8)));
    }

    @Test
    void queryPortFallsBackToTheCompatSymbolAsVerbsGetCtxOpSays() {
        // Not extended: the compat path (not called here: it would dereference the fake provider).
        ibv_context.abi_compat(context, MemorySegment.NULL);
        verbs_context.sz(vctx, verbs_context.sizeof());
        verbs_context.query_port(vctx, getpid);
        assertEquals(0, VerbsInline.queryPortOp(context).address());
        // Extended, but the provider's verbs_context is too old to have query_port.
        ibv_context.abi_compat(context, ibverbs_h.__VERBS_ABI_IS_EXTENDED());
        verbs_context.sz(vctx, verbs_context.sizeof() - verbs_context.query_port$offset() - 1);
        assertEquals(0, VerbsInline.queryPortOp(context).address());
        verbs_context.sz(vctx, verbs_context.sizeof() - verbs_context.query_port$offset());
        assertEquals(getpid.address(), VerbsInline.queryPortOp(context).address());
        // Extended and large enough, but no op.
        verbs_context.query_port(vctx, MemorySegment.NULL);
        assertEquals(0, VerbsInline.queryPortOp(context).address());
    }

    @Test
    void theDataPathDoesNotAllocate() throws Exception {
        Object threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        Method allocated;
        try {
            allocated = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        } catch (ClassNotFoundException e) {
            assumeTrue(false, "com.sun.management.ThreadMXBean not available: allocation not measurable");
            return;
        }
        MemorySegment sendWr = ibv_send_wr.allocate(arena);
        MemorySegment recvWr = ibv_recv_wr.allocate(arena);
        MemorySegment bad = arena.allocate(ADDRESS);
        MemorySegment wc = ibv_wc.allocateArray(16, arena);
        int calls = 200_000;
        long best = Long.MAX_VALUE;
        long sink = 0;
        // Rounds until the JIT has compiled the loop (escape analysis removes the transient segments).
        // Bounded by time, not by a round count: on a loaded machine C2 may take a while to get there.
        long deadline = System.nanoTime() + 120_000_000_000L;
        for (int round = 0; best >= 1024 && (round < 30 || System.nanoTime() < deadline); round++) {
            long before = (long) allocated.invoke(threads);
            sink += dataPathRound(calls, sendWr, recvWr, bad, wc);
            long after = (long) allocated.invoke(threads);
            best = Math.min(best, after - before);
        }
        System.out.println("VerbsInline: " + best + " bytes allocated for " + 4L * calls + " inline calls (best round)");
        assertNotEquals(0, sink);
        // The measurement itself boxes a long or two; anything per call would be >= 3.2 MB here.
        assertTrue(best < 1024, best + " bytes allocated by " + 4L * calls + " calls");
    }

    /**
     * One measured round, in a method of its own: called once per round, it gets a normal C2
     * compilation with the inline wrappers inlined, instead of living on in an OSR compilation of
     * the round loop, whose inlining (and so escape analysis) depends on timing.
     */
    private long dataPathRound(int calls, MemorySegment sendWr, MemorySegment recvWr, MemorySegment bad,
            MemorySegment wc) {
        long sink = 0;
        for (int i = 0; i < calls; i++) {
            sink += VerbsInline.ibv_post_send(qp, sendWr, bad);
            sink += VerbsInline.ibv_post_recv(qp, recvWr, bad);
            sink += VerbsInline.ibv_poll_cq(cq, 16, wc);
            sink += VerbsInline.ibv_req_notify_cq(cq, 0);
        }
        return sink;
    }
}
