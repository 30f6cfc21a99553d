package dev.rdmarpc.ibverbs;

import dev.rdmarpc.ibverbs.raw.ibverbs_h;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The libibverbs calls that report failure through {@code errno}, with errno captured by the JDK
 * ({@link Linker.Option#captureCallState(String...) captureCallState("errno")}) and turned into a
 * {@link VerbsException} that carries the operation and errno's {@code strerror} text. This is the
 * hand-written companion of the generated {@code dev.rdmarpc.ibverbs.raw} (jextract cannot capture
 * errno); the idiomatic verbs layer builds on it.
 *
 * <p>Each {@code ibv_*} method is the C function of the same name, with the same arguments and
 * result, except that a failure (NULL or -1 with errno set) throws instead of being returned.
 * Pointer arguments are segments as the raw bindings return them. Functions that return the errno
 * value itself ({@code ibv_modify_qp}, {@code ibv_destroy_qp}, {@code ibv_dereg_mr}, ...) are
 * called through the raw bindings and checked with {@link #check(String, int)}.
 *
 * <p>Every method is thread-safe. errno is captured into a call-state segment allocated once per
 * thread ({@link #callState()}), so these calls do not allocate after a thread's first one; they
 * are meant for the control path, not per message. Each call first checks
 * {@link Ibverbs#ensureAvailability()}, so a missing libibverbs gives one clear exception.
 */
public final class VerbsNative {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final int EAGAIN = 11;

    /** Layout of the call state the JDK fills in after a capturing downcall (it holds errno). */
    public static final StructLayout CALL_STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<MemorySegment> CALL_STATE =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CALL_STATE_LAYOUT));

    private static final AddressLayout C_STRING =
            ADDRESS.withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, JAVA_BYTE));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(
            LINKER.defaultLookup().find("strerror").orElseThrow(), FunctionDescriptor.of(C_STRING, JAVA_INT));

    private VerbsNative() {
    }

    /** Downcall handles of libibverbs; initialised (and the library loaded) on first use. */
    private static final class Downcalls {
        static final MethodHandle GET_DEVICE_LIST =
                capture(ibverbs_h.ibv_get_device_list$address(), ibverbs_h.ibv_get_device_list$descriptor());
        static final MethodHandle OPEN_DEVICE =
                capture(ibverbs_h.ibv_open_device$address(), ibverbs_h.ibv_open_device$descriptor());
        static final MethodHandle ALLOC_PD =
                capture(ibverbs_h.ibv_alloc_pd$address(), ibverbs_h.ibv_alloc_pd$descriptor());
        static final MethodHandle REG_MR =
                capture(ibverbs_h.ibv_reg_mr$address(), ibverbs_h.ibv_reg_mr$descriptor());
        static final MethodHandle REG_MR_IOVA2 =
                capture(ibverbs_h.ibv_reg_mr_iova2$address(), ibverbs_h.ibv_reg_mr_iova2$descriptor());
        static final MethodHandle REG_DMABUF_MR =
                capture(ibverbs_h.ibv_reg_dmabuf_mr$address(), ibverbs_h.ibv_reg_dmabuf_mr$descriptor());
        static final MethodHandle CREATE_COMP_CHANNEL =
                capture(ibverbs_h.ibv_create_comp_channel$address(), ibverbs_h.ibv_create_comp_channel$descriptor());
        static final MethodHandle CREATE_CQ =
                capture(ibverbs_h.ibv_create_cq$address(), ibverbs_h.ibv_create_cq$descriptor());
        static final MethodHandle CREATE_SRQ =
                capture(ibverbs_h.ibv_create_srq$address(), ibverbs_h.ibv_create_srq$descriptor());
        static final MethodHandle CREATE_QP =
                capture(ibverbs_h.ibv_create_qp$address(), ibverbs_h.ibv_create_qp$descriptor());
        static final MethodHandle CREATE_AH =
                capture(ibverbs_h.ibv_create_ah$address(), ibverbs_h.ibv_create_ah$descriptor());
        static final MethodHandle GET_CQ_EVENT =
                capture(ibverbs_h.ibv_get_cq_event$address(), ibverbs_h.ibv_get_cq_event$descriptor());
        static final MethodHandle GET_ASYNC_EVENT =
                capture(ibverbs_h.ibv_get_async_event$address(), ibverbs_h.ibv_get_async_event$descriptor());
        static final MethodHandle QUERY_GID =
                capture(ibverbs_h.ibv_query_gid$address(), ibverbs_h.ibv_query_gid$descriptor());

        private static MethodHandle capture(MemorySegment function, FunctionDescriptor descriptor) {
            return downcallCapturingErrno(function, descriptor);
        }
    }

    // ---------------------------------------------------------------- errno plumbing

    /**
     * A downcall handle that captures errno: its first parameter is a call-state segment (see
     * {@link #callState()}), followed by the function's own parameters. For calls this class does
     * not wrap; read errno afterwards with {@link #errno(MemorySegment)}.
     */
    public static MethodHandle downcallCapturingErrno(MemorySegment function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(function, descriptor, CAPTURE_ERRNO);
    }

    /**
     * This thread's call-state segment ({@link #CALL_STATE_LAYOUT}), allocated on the thread's first
     * use and reused by every capturing call on that thread.
     */
    public static MemorySegment callState() {
        return CALL_STATE.get();
    }

    /** The errno a capturing call stored in {@code callState}. */
    public static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    /** The C library's text for an errno value ({@code strerror}). */
    public static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.address() == 0 ? "errno " + errno : text.getString(0);
        } catch (Throwable t) {
            throw new AssertionError("strerror", t);
        }
    }

    /**
     * For the verbs that return 0 on success and an errno value on failure ({@code ibv_modify_qp},
     * {@code ibv_query_device}, {@code ibv_destroy_*}, {@code ibv_dereg_mr}, ...). Some providers
     * return the errno value negated; both signs are accepted.
     *
     * @throws VerbsException when {@code result} is not 0
     */
    public static void check(String operation, int result) {
        if (result != 0) {
            throw new VerbsException(operation, Math.abs(result));
        }
    }

    // ---------------------------------------------------------------- devices and contexts

    /**
     * {@code struct ibv_device **ibv_get_device_list(int *num_devices)}: the NULL-terminated list,
     * to be released with {@code ibv_free_device_list}. With no RDMA device the list is empty.
     *
     * @param numDevices an {@code int} receiving the count, or {@link MemorySegment#NULL}
     * @throws VerbsException with errno, e.g. ENOSYS when the kernel has no RDMA support
     */
    public static MemorySegment ibv_get_device_list(MemorySegment numDevices) {
        Ibverbs.ensureAvailability();
        MemorySegment state = callState();
        MemorySegment list;
        try {
            list = (MemorySegment) Downcalls.GET_DEVICE_LIST.invokeExact(state, numDevices);
        } catch (Throwable t) {
            throw new AssertionError("ibv_get_device_list", t);
        }
        return nonNull("ibv_get_device_list", list, state);
    }

    /** {@code struct ibv_context *ibv_open_device(struct ibv_device *device)}. */
    public static MemorySegment ibv_open_device(MemorySegment device) {
        Ibverbs.ensureAvailability();
        requirePointer(device, "device");
        MemorySegment state = callState();
        MemorySegment context;
        try {
            context = (MemorySegment) Downcalls.OPEN_DEVICE.invokeExact(state, device);
        } catch (Throwable t) {
            throw new AssertionError("ibv_open_device", t);
        }
        return nonNull("ibv_open_device", context, state);
    }

    /** {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)}. */
    public static MemorySegment ibv_alloc_pd(MemorySegment context) {
        Ibverbs.ensureAvailability();
        requirePointer(context, "context");
        MemorySegment state = callState();
        MemorySegment pd;
        try {
            pd = (MemorySegment) Downcalls.ALLOC_PD.invokeExact(state, context);
        } catch (Throwable t) {
            throw new AssertionError("ibv_alloc_pd", t);
        }
        return nonNull("ibv_alloc_pd", pd, state);
    }

    // ---------------------------------------------------------------- memory regions

    /**
     * {@code ibv_reg_mr(pd, addr, length, access)}. In verbs.h this is a macro over an inline that
     * calls the {@code ibv_reg_mr} symbol when {@code access} has no {@code IBV_ACCESS_OPTIONAL_RANGE}
     * bit and {@code ibv_reg_mr_iova2(pd, addr, length, (uintptr_t) addr, access)} otherwise; so does
     * this method.
     */
    public static MemorySegment ibv_reg_mr(MemorySegment pd, MemorySegment addr, long length, int access) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        if ((access & ibverbs_h.IBV_ACCESS_OPTIONAL_RANGE()) != 0) {
            return ibv_reg_mr_iova2(pd, addr, length, addr.address(), access);
        }
        MemorySegment state = callState();
        MemorySegment mr;
        try {
            mr = (MemorySegment) Downcalls.REG_MR.invokeExact(state, pd, addr, length, access);
        } catch (Throwable t) {
            throw new AssertionError("ibv_reg_mr", t);
        }
        return nonNull("ibv_reg_mr", mr, state);
    }

    /** {@code struct ibv_mr *ibv_reg_mr_iova2(pd, addr, length, iova, access)}. */
    public static MemorySegment ibv_reg_mr_iova2(MemorySegment pd, MemorySegment addr, long length, long iova,
                                                 int access) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        MemorySegment state = callState();
        MemorySegment mr;
        try {
            mr = (MemorySegment) Downcalls.REG_MR_IOVA2.invokeExact(state, pd, addr, length, iova, access);
        } catch (Throwable t) {
            throw new AssertionError("ibv_reg_mr_iova2", t);
        }
        return nonNull("ibv_reg_mr_iova2", mr, state);
    }

    /** {@code struct ibv_mr *ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access)}: GPU memory by dma-buf fd. */
    public static MemorySegment ibv_reg_dmabuf_mr(MemorySegment pd, long offset, long length, long iova, int fd,
                                                  int access) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        MemorySegment state = callState();
        MemorySegment mr;
        try {
            mr = (MemorySegment) Downcalls.REG_DMABUF_MR.invokeExact(state, pd, offset, length, iova, fd, access);
        } catch (Throwable t) {
            throw new AssertionError("ibv_reg_dmabuf_mr", t);
        }
        return nonNull("ibv_reg_dmabuf_mr", mr, state);
    }

    // ---------------------------------------------------------------- completion channels, CQs, SRQs, QPs, AHs

    /** {@code struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)}. */
    public static MemorySegment ibv_create_comp_channel(MemorySegment context) {
        Ibverbs.ensureAvailability();
        requirePointer(context, "context");
        MemorySegment state = callState();
        MemorySegment channel;
        try {
            channel = (MemorySegment) Downcalls.CREATE_COMP_CHANNEL.invokeExact(state, context);
        } catch (Throwable t) {
            throw new AssertionError("ibv_create_comp_channel", t);
        }
        return nonNull("ibv_create_comp_channel", channel, state);
    }

    /** {@code struct ibv_cq *ibv_create_cq(context, cqe, cq_context, channel, comp_vector)}; channel may be NULL. */
    public static MemorySegment ibv_create_cq(MemorySegment context, int cqe, MemorySegment cqContext,
                                              MemorySegment channel, int compVector) {
        Ibverbs.ensureAvailability();
        requirePointer(context, "context");
        MemorySegment state = callState();
        MemorySegment cq;
        try {
            cq = (MemorySegment) Downcalls.CREATE_CQ.invokeExact(state, context, cqe, cqContext, channel, compVector);
        } catch (Throwable t) {
            throw new AssertionError("ibv_create_cq", t);
        }
        return nonNull("ibv_create_cq", cq, state);
    }

    /** {@code struct ibv_srq *ibv_create_srq(pd, srq_init_attr)}. */
    public static MemorySegment ibv_create_srq(MemorySegment pd, MemorySegment srqInitAttr) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        MemorySegment state = callState();
        MemorySegment srq;
        try {
            srq = (MemorySegment) Downcalls.CREATE_SRQ.invokeExact(state, pd, srqInitAttr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_create_srq", t);
        }
        return nonNull("ibv_create_srq", srq, state);
    }

    /** {@code struct ibv_qp *ibv_create_qp(pd, qp_init_attr)}. */
    public static MemorySegment ibv_create_qp(MemorySegment pd, MemorySegment qpInitAttr) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        MemorySegment state = callState();
        MemorySegment qp;
        try {
            qp = (MemorySegment) Downcalls.CREATE_QP.invokeExact(state, pd, qpInitAttr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_create_qp", t);
        }
        return nonNull("ibv_create_qp", qp, state);
    }

    /** {@code struct ibv_ah *ibv_create_ah(pd, attr)}. */
    public static MemorySegment ibv_create_ah(MemorySegment pd, MemorySegment attr) {
        Ibverbs.ensureAvailability();
        requirePointer(pd, "pd");
        MemorySegment state = callState();
        MemorySegment ah;
        try {
            ah = (MemorySegment) Downcalls.CREATE_AH.invokeExact(state, pd, attr);
        } catch (Throwable t) {
            throw new AssertionError("ibv_create_ah", t);
        }
        return nonNull("ibv_create_ah", ah, state);
    }

    // ---------------------------------------------------------------- events and queries (-1 and errno)

    /**
     * {@code int ibv_get_cq_event(channel, struct ibv_cq **cq, void **cq_context)}: blocks (unless the
     * channel's fd is non-blocking) until a completion event arrives.
     *
     * @throws VerbsException with errno (EAGAIN for a non-blocking channel with no event)
     */
    public static void ibv_get_cq_event(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
        Ibverbs.ensureAvailability();
        requirePointer(channel, "channel");
        MemorySegment state = callState();
        int rc;
        try {
            rc = (int) Downcalls.GET_CQ_EVENT.invokeExact(state, channel, cqOut, cqContextOut);
        } catch (Throwable t) {
            throw new AssertionError("ibv_get_cq_event", t);
        }
        zero("ibv_get_cq_event", rc, state);
    }

    /**
     * {@link #ibv_get_cq_event} for the per-wake-up path: the call captures no errno (a capturing call
     * slices its call-state segment each time, which only the full JIT removes, and not always), and
     * only when it fails is it made once more, capturing, to learn why.
     *
     * @return true when an event was taken, false when none was pending (EAGAIN on a non-blocking channel)
     * @throws VerbsException for any other failure
     */
    public static boolean tryGetCqEvent(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
        Ibverbs.ensureAvailability();
        requirePointer(channel, "channel");
        if (ibverbs_h.ibv_get_cq_event(channel, cqOut, cqContextOut) == 0) {
            return true;
        }
        try {
            ibv_get_cq_event(channel, cqOut, cqContextOut);
            return true;
        } catch (VerbsException e) {
            if (e.errno() == EAGAIN) {
                return false;
            }
            throw e;
        }
    }

    /** {@code int ibv_get_async_event(context, struct ibv_async_event *event)}; acknowledge with ibv_ack_async_event. */
    public static void ibv_get_async_event(MemorySegment context, MemorySegment event) {
        Ibverbs.ensureAvailability();
        requirePointer(context, "context");
        MemorySegment state = callState();
        int rc;
        try {
            rc = (int) Downcalls.GET_ASYNC_EVENT.invokeExact(state, context, event);
        } catch (Throwable t) {
            throw new AssertionError("ibv_get_async_event", t);
        }
        zero("ibv_get_async_event", rc, state);
    }

    /** {@code int ibv_query_gid(context, port_num, index, union ibv_gid *gid)}. */
    public static void ibv_query_gid(MemorySegment context, byte portNum, int index, MemorySegment gid) {
        Ibverbs.ensureAvailability();
        requirePointer(context, "context");
        MemorySegment state = callState();
        int rc;
        try {
            rc = (int) Downcalls.QUERY_GID.invokeExact(state, context, portNum, index, gid);
        } catch (Throwable t) {
            throw new AssertionError("ibv_query_gid", t);
        }
        zero("ibv_query_gid", rc, state);
    }

    // ---------------------------------------------------------------- helpers

    private static MemorySegment nonNull(String operation, MemorySegment result, MemorySegment state) {
        if (result.address() == 0) {
            throw new VerbsException(operation, errno(state));
        }
        return result;
    }

    private static void zero(String operation, int rc, MemorySegment state) {
        if (rc != 0) {
            throw new VerbsException(operation, errno(state));
        }
    }

    private static void requirePointer(MemorySegment pointer, String name) {
        if (pointer == null || pointer.address() == 0) {
            throw new IllegalArgumentException(name + " is NULL");
        }
    }
}
