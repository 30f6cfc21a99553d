package dev.rdmarpc.ibverbs;

import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_context_ops;
import dev.rdmarpc.ibverbs.raw.ibv_cq;
import dev.rdmarpc.ibverbs.raw.ibv_mw;
import dev.rdmarpc.ibverbs.raw.ibv_pd;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
    void allocMwCallsOpsAllocMwWithThePdAndTheType() {
        MemorySegment pd = ibv_pd.allocate(arena);
        ibv_pd.context(pd, context);
        MemorySegment fakeMw = ibv_mw.allocate(arena);
        AtomicLong seenPd = new AtomicLong();
        AtomicInteger seenType = new AtomicInteger(-1);
        ops.set(ADDRESS, ibv_context_ops.alloc_mw$offset(), ibv_context_ops.alloc_mw.allocate((p, type) -> {
            seenPd.set(p.address());
            seenType.set(type);
            return fakeMw;
        }, arena));
        assertEquals(fakeMw.address(), VerbsInline.ibv_alloc_mw(pd, ibverbs_h.IBV_MW_TYPE_2()).address());
        assertEquals(pd.address(), seenPd.get());
        assertEquals(2, seenType.get());
    }

    @Test
    void allocMwWithoutTheOpFailsWithEopnotsuppAsTheInlineDoes() {
        MemorySegment pd = ibv_pd.allocate(arena);
        ibv_pd.context(pd, context);
        ops.set(ADDRESS, ibv_context_ops.alloc_mw$offset(), MemorySegment.NULL);
        VerbsException e = assertThrows(VerbsException.class, () -> VerbsInline.ibv_alloc_mw(pd, 2));
        assertEquals("ibv_alloc_mw", e.operation());
        assertEquals(95, e.errno(), e.getMessage()); // EOPNOTSUPP
    }

    @Test
    void allocMwReturningNullThrowsWithTheErrnoItSet() {
        // A provider that fails: libc's fdopendir(fd) in the slot. It takes the pd pointer's low 32 bits as the
        // fd; the fake pd is placed where they are negative or at least 2^20 (above any open descriptor, the
        // kernel's nr_open), so it returns NULL with errno EBADF, which the capturing call must report.
        MemorySegment block = arena.allocate(ibv_pd.sizeof() + (1 << 20), 8);
        int low = (int) block.address();
        MemorySegment pd = block.asSlice(low >= 0 && low < (1 << 20) ? 1 << 20 : 0, ibv_pd.sizeof());
        ibv_pd.context(pd, context);
        ops.set(ADDRESS, ibv_context_ops.alloc_mw$offset(), LINKER.defaultLookup().find("fdopendir").orElseThrow());
        VerbsException e = assertThrows(VerbsException.class, () -> VerbsInline.ibv_alloc_mw(pd, 2));
        assertEquals("ibv_alloc_mw", e.operation());
        assertEquals(9, e.errno(), e.getMessage()); // EBADF
    }

    @Test
    void deallocMwCallsOpsDeallocMw() {
        MemorySegment mw = ibv_mw.allocate(arena);
        ibv_mw.context(mw, context);
        assertEquals(pageSize, VerbsInline.ibv_dealloc_mw(mw));
        slot(ibv_context_ops.dealloc_mw$offset());
        assertEquals(pid, VerbsInline.ibv_dealloc_mw(mw));
    }
}
