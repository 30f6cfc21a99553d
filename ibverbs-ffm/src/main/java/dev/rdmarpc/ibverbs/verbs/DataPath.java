package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_context_ops;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The data-path calls of verbs.h's inlines ({@link dev.rdmarpc.ibverbs.VerbsInline}) in the form
 * the resources use them: the provider's function pointer is loaded from
 * {@code context->ops} once, when the queue pair or CQ is created, and every pointer argument is
 * passed as a plain {@code long} address. Nothing is allocated and nothing depends on escape
 * analysis: the handles take only primitives. The pointer arguments are {@code void *} in C, so
 * passing them as 64-bit integers is the same call on the LP64 ABIs this runs on.
 */
final class DataPath {
    private static final Linker LINKER = Linker.nativeLinker();
    /** {@code int (*)(void *, void *, void **)}: post_send, post_recv, post_srq_recv. */
    private static final MethodHandle POST = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /** {@code int (*)(struct ibv_cq *, int, struct ibv_wc *)}. */
    private static final MethodHandle POLL_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));
    /** {@code int (*)(struct ibv_cq *, int)}. */
    private static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT));

    static final long OPS_POST_SEND = ibv_context.ops$offset() + ibv_context_ops.post_send$offset();
    static final long OPS_POST_RECV = ibv_context.ops$offset() + ibv_context_ops.post_recv$offset();
    static final long OPS_POST_SRQ_RECV = ibv_context.ops$offset() + ibv_context_ops.post_srq_recv$offset();
    static final long OPS_POLL_CQ = ibv_context.ops$offset() + ibv_context_ops.poll_cq$offset();
    static final long OPS_REQ_NOTIFY_CQ = ibv_context.ops$offset() + ibv_context_ops.req_notify_cq$offset();

    private DataPath() {
    }

    /** The function pointer at {@code opsOffset} of a context, as an address (checked non-NULL). */
    static MemorySegment op(MemorySegment context, long opsOffset, String name) {
        MemorySegment fn = context.reinterpret(ibv_context.sizeof()).get(java.lang.foreign.ValueLayout.ADDRESS,
                opsOffset);
        if (fn.address() == 0) {
            throw new UnsupportedOperationException("the provider has no " + name);
        }
        return fn;
    }

    /** post_send / post_recv / post_srq_recv: 0 or an errno value. */
    static int post(MemorySegment fn, long queue, long wr, long badWr) {
        try {
            return (int) POST.invokeExact(fn, queue, wr, badWr);
        } catch (Throwable t) {
            throw new AssertionError("post", t);
        }
    }

    /** poll_cq: the count, or negative on error. */
    static int pollCq(MemorySegment fn, long cq, int max, long wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, max, wc);
        } catch (Throwable t) {
            throw new AssertionError("poll_cq", t);
        }
    }

    /** req_notify_cq: 0 or an errno value. */
    static int reqNotifyCq(MemorySegment fn, long cq, int solicitedOnly) {
        try {
            return (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly);
        } catch (Throwable t) {
            throw new AssertionError("req_notify_cq", t);
        }
    }
}
