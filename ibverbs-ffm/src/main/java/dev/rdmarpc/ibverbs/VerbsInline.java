package dev.rdmarpc.ibverbs;

import dev.rdmarpc.ibverbs.raw.ibv_context;
import dev.rdmarpc.ibverbs.raw.ibv_context_ops;
import dev.rdmarpc.ibverbs.raw.ibv_cq;
import dev.rdmarpc.ibverbs.raw.ibv_mw;
import dev.rdmarpc.ibverbs.raw.ibv_pd;
import dev.rdmarpc.ibverbs.raw.ibv_port_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp;
import dev.rdmarpc.ibverbs.raw.ibv_srq;
import dev.rdmarpc.ibverbs.raw.ibv_wc;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.ibverbs.raw.verbs_context;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The {@code static inline} functions of rdma-core's {@code <infiniband/verbs.h>} that the data
 * path needs, which jextract cannot generate because they are not symbols of libibverbs. Each one
 * does exactly what the C inline does (rdma-core 44): it loads a function pointer from the verbs
 * objects and calls it.
 *
 * <pre>{@code
 * ibv_post_send(qp, wr, bad_wr)         = qp->context->ops.post_send(qp, wr, bad_wr)
 * ibv_post_recv(qp, wr, bad_wr)         = qp->context->ops.post_recv(qp, wr, bad_wr)
 * ibv_post_srq_recv(srq, wr, bad_wr)    = srq->context->ops.post_srq_recv(srq, wr, bad_wr)
 * ibv_poll_cq(cq, num_entries, wc)      = cq->context->ops.poll_cq(cq, num_entries, wc)
 * ibv_req_notify_cq(cq, solicited_only) = cq->context->ops.req_notify_cq(cq, solicited_only)
 * ibv_query_port(context, port, attr)   = ___ibv_query_port: verbs_context's query_port op when the
 *                                         context is extended and has it, else the compat symbol
 * ibv_alloc_mw(pd, type)                = pd->context->ops.alloc_mw(pd, type), or NULL with errno
 *                                         EOPNOTSUPP when the provider has no alloc_mw op
 * ibv_dealloc_mw(mw)                    = mw->context->ops.dealloc_mw(mw)
 * }</pre>
 *
 * <p>Results are the C results: 0 or an errno value for the posts, {@code ibv_req_notify_cq} and
 * {@code ibv_dealloc_mw}, the number of completions (or a negative value on error) for
 * {@code ibv_poll_cq}. Nothing is thrown for them, so the hot path stays free of exceptions; check
 * with {@link VerbsNative#check(String, int)} where a failure is a fault. The one allocation,
 * {@code ibv_alloc_mw}, is a control-path call that reports failure through {@code errno}: like the
 * allocations of {@link VerbsNative} it captures errno and throws a {@link VerbsException}.
 *
 * <p>Pointer arguments are segments as the raw bindings return them (jextract's pointers are
 * unbounded, so the fields of the pointed-to struct can be read). The downcall handles are static
 * finals and the methods allocate nothing. They are thread-safe as far as the provider is; verbs
 * objects follow libibverbs' own threading rules. Loading this class requires libibverbs: check
 * {@link Ibverbs#ensureAvailability()} first (a queue pair cannot exist without it anyway).
 *
 * <p>Allocation: each call reads its function pointer out of {@code ibv_context_ops} as a transient
 * {@code MemorySegment}. C2's escape analysis usually removes it, but not reliably (it depends on
 * inlining decisions), so these wrappers are not guaranteed allocation-free. The library's own data path,
 * {@code dev.rdmarpc.ibverbs.verbs} ({@code QueuePair}, {@code CompletionQueue}), caches the function
 * pointers per object and is measured allocation-free; use it on hot paths.
 */
public final class VerbsInline {
    static {
        Ibverbs.ensureAvailability();
    }

    private static final Linker LINKER = Linker.nativeLinker();
    /** Pointer layout whose target is unbounded, as jextract's: loaded pointers can be dereferenced. */
    private static final AddressLayout POINTER = ibverbs_h.C_POINTER;

    private static final long QP_CONTEXT = ibv_qp.context$offset();
    private static final long SRQ_CONTEXT = ibv_srq.context$offset();
    private static final long CQ_CONTEXT = ibv_cq.context$offset();
    private static final long OPS = ibv_context.ops$offset();
    private static final long OPS_POST_SEND = OPS + ibv_context_ops.post_send$offset();
    private static final long OPS_POST_RECV = OPS + ibv_context_ops.post_recv$offset();
    private static final long OPS_POST_SRQ_RECV = OPS + ibv_context_ops.post_srq_recv$offset();
    private static final long OPS_POLL_CQ = OPS + ibv_context_ops.poll_cq$offset();
    private static final long OPS_REQ_NOTIFY_CQ = OPS + ibv_context_ops.req_notify_cq$offset();

    private static final MethodHandle POST_SEND = LINKER.downcallHandle(ibv_context_ops.post_send.descriptor());
    private static final MethodHandle POST_RECV = LINKER.downcallHandle(ibv_context_ops.post_recv.descriptor());
    private static final MethodHandle POST_SRQ_RECV = LINKER.downcallHandle(ibv_context_ops.post_srq_recv.descriptor());
    private static final MethodHandle POLL_CQ = LINKER.downcallHandle(ibv_context_ops.poll_cq.descriptor());
    private static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(ibv_context_ops.req_notify_cq.descriptor());

    // memory windows: the provider's ops, alloc_mw capturing errno (its first parameters: the function, the call state)
    private static final long PD_CONTEXT = ibv_pd.context$offset();
    private static final long MW_CONTEXT = ibv_mw.context$offset();
    private static final long OPS_ALLOC_MW = OPS + ibv_context_ops.alloc_mw$offset();
    private static final long OPS_DEALLOC_MW = OPS + ibv_context_ops.dealloc_mw$offset();
    private static final MethodHandle ALLOC_MW =
            LINKER.downcallHandle(ibv_context_ops.alloc_mw.descriptor(), Linker.Option.captureCallState("errno"));
    private static final MethodHandle DEALLOC_MW = LINKER.downcallHandle(ibv_context_ops.dealloc_mw.descriptor());
    private static final int EOPNOTSUPP = 95;

    // ___ibv_query_port and verbs_get_ctx_op(context, query_port)
    private static final long CONTEXT_ABI_COMPAT = ibv_context.abi_compat$offset();
    private static final long VCTX_CONTEXT = verbs_context.context$offset();
    private static final long VCTX_SZ = verbs_context.sz$offset();
    private static final long VCTX_QUERY_PORT = verbs_context.query_port$offset();
    private static final long VCTX_SIZEOF = verbs_context.sizeof();
    private static final long EXTENDED = ibverbs_h.__VERBS_ABI_IS_EXTENDED().address();
    private static final long PORT_ATTR_SIZEOF = ibv_port_attr.sizeof();
    private static final long WC_SIZEOF = ibv_wc.sizeof();
    private static final MethodHandle VCTX_QUERY_PORT_CALL =
            LINKER.downcallHandle(verbs_context.query_port.descriptor());

    private VerbsInline() {
    }

    /**
     * {@code int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)}.
     *
     * @return 0, or an errno value with {@code *bad_wr} set to the first work request not posted
     */
    public static int ibv_post_send(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        MemorySegment fn = qp.get(POINTER, QP_CONTEXT).get(POINTER, OPS_POST_SEND);
        try {
            return (int) POST_SEND.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_post_send", t);
        }
    }

    /**
     * {@code int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)}.
     *
     * @return 0, or an errno value with {@code *bad_wr} set to the first work request not posted
     */
    public static int ibv_post_recv(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        MemorySegment fn = qp.get(POINTER, QP_CONTEXT).get(POINTER, OPS_POST_RECV);
        try {
            return (int) POST_RECV.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_post_recv", t);
        }
    }

    /**
     * {@code int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)}.
     *
     * @return 0, or an errno value with {@code *bad_wr} set to the first work request not posted
     */
    public static int ibv_post_srq_recv(MemorySegment srq, MemorySegment wr, MemorySegment badWr) {
        MemorySegment fn = srq.get(POINTER, SRQ_CONTEXT).get(POINTER, OPS_POST_SRQ_RECV);
        try {
            return (int) POST_SRQ_RECV.invokeExact(fn, srq, wr, badWr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_post_srq_recv", t);
        }
    }

    /**
     * {@code int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}.
     *
     * @param wc room for {@code numEntries} {@code struct ibv_wc}s (checked: the provider writes there)
     * @return the number of completions written (0 when the CQ is empty), or a negative value on error
     * @throws IndexOutOfBoundsException if {@code wc} is smaller than {@code numEntries} completions
     */
    public static int ibv_poll_cq(MemorySegment cq, int numEntries, MemorySegment wc) {
        if (numEntries < 0 || (long) numEntries * WC_SIZEOF > wc.byteSize()) {
            throw new IndexOutOfBoundsException("wc holds " + wc.byteSize() / WC_SIZEOF + " completions, not " + numEntries);
        }
        MemorySegment fn = cq.get(POINTER, CQ_CONTEXT).get(POINTER, OPS_POLL_CQ);
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, numEntries, wc);
        } catch (Throwable t) {
            throw new AssertionError("ibv_poll_cq", t);
        }
    }

    /**
     * {@code int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)}.
     *
     * @return 0, or an errno value
     */
    public static int ibv_req_notify_cq(MemorySegment cq, int solicitedOnly) {
        MemorySegment fn = cq.get(POINTER, CQ_CONTEXT).get(POINTER, OPS_REQ_NOTIFY_CQ);
        try {
            return (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly);
        } catch (Throwable t) {
            throw new AssertionError("ibv_req_notify_cq", t);
        }
    }

    /**
     * {@code struct ibv_mw *ibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)}: a memory window of
     * {@code type} ({@code IBV_MW_TYPE_1} or {@code IBV_MW_TYPE_2}) in {@code pd}, to be freed with
     * {@link #ibv_dealloc_mw}. A provider without the op fails as the C inline does, with EOPNOTSUPP.
     *
     * @return the {@code struct ibv_mw *} (unbounded, as the raw bindings return pointers)
     * @throws VerbsException with errno when the provider returns NULL (or has no {@code alloc_mw})
     */
    public static MemorySegment ibv_alloc_mw(MemorySegment pd, int type) {
        MemorySegment fn = pd.get(POINTER, PD_CONTEXT).get(POINTER, OPS_ALLOC_MW);
        if (fn.address() == 0) {
            throw new VerbsException("ibv_alloc_mw", EOPNOTSUPP);
        }
        MemorySegment state = VerbsNative.callState();
        MemorySegment mw;
        try {
            mw = (MemorySegment) ALLOC_MW.invokeExact(fn, state, pd, type);
        } catch (Throwable t) {
            throw new AssertionError("ibv_alloc_mw", t);
        }
        if (mw.address() == 0) {
            throw new VerbsException("ibv_alloc_mw", VerbsNative.errno(state));
        }
        return mw;
    }

    /**
     * {@code int ibv_dealloc_mw(struct ibv_mw *mw)}: frees a window {@link #ibv_alloc_mw} returned,
     * bound or not.
     *
     * @return 0, or an errno value (then the window still exists)
     */
    public static int ibv_dealloc_mw(MemorySegment mw) {
        MemorySegment fn = mw.get(POINTER, MW_CONTEXT).get(POINTER, OPS_DEALLOC_MW);
        try {
            return (int) DEALLOC_MW.invokeExact(fn, mw);
        } catch (Throwable t) {
            throw new AssertionError("ibv_dealloc_mw", t);
        }
    }

    /**
     * {@code int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr)},
     * the macro over {@code ___ibv_query_port}: through {@code verbs_context}'s {@code query_port}
     * op (passing {@code sizeof(struct ibv_port_attr)}) when the context is extended and its
     * provider has the op, otherwise zero {@code *port_attr} and call the compat symbol
     * {@code ibv_query_port}.
     *
     * @param portAttr room for a {@code struct ibv_port_attr} (checked)
     * @return 0, or an errno value
     */
    public static int ibv_query_port(MemorySegment context, byte portNum, MemorySegment portAttr) {
        if (portAttr.byteSize() < PORT_ATTR_SIZEOF) {
            throw new IndexOutOfBoundsException("port_attr is " + portAttr.byteSize() + " bytes, struct ibv_port_attr "
                    + PORT_ATTR_SIZEOF);
        }
        MemorySegment op = queryPortOp(context);
        try {
            if (op.address() == 0) {
                portAttr.asSlice(0, PORT_ATTR_SIZEOF).fill((byte) 0);
                return ibverbs_h.ibv_query_port(context, portNum, portAttr);
            }
            return (int) VCTX_QUERY_PORT_CALL.invokeExact(op, context, portNum, portAttr, PORT_ATTR_SIZEOF);
        } catch (Throwable t) {
            throw new AssertionError("ibv_query_port", t);
        }
    }

    /**
     * {@code verbs_get_ctx_op(context, query_port)}: the provider's {@code query_port} op of an
     * extended context that is large enough to have it, else NULL.
     */
    static MemorySegment queryPortOp(MemorySegment context) {
        if (context.get(POINTER, CONTEXT_ABI_COMPAT).address() != EXTENDED) {
            return MemorySegment.NULL;
        }
        // container_of(context, struct verbs_context, context)
        MemorySegment vctx = MemorySegment.ofAddress(context.address() - VCTX_CONTEXT).reinterpret(VCTX_SIZEOF);
        long sz = vctx.get(ValueLayout.JAVA_LONG, VCTX_SZ); // size_t
        if (Long.compareUnsigned(sz, VCTX_SIZEOF - VCTX_QUERY_PORT) < 0) {
            return MemorySegment.NULL;
        }
        return vctx.get(POINTER, VCTX_QUERY_PORT);
    }
}
