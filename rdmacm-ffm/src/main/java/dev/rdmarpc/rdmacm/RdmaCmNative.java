package dev.rdmarpc.rdmacm;

import dev.rdmarpc.ibverbs.VerbsNative;
import dev.rdmarpc.rdmacm.raw.rdmacm_h;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The librdmacm calls, with errno captured by the JDK ({@code captureCallState("errno")}, through
 * {@link VerbsNative#downcallCapturingErrno}) and a failure (-1 or NULL with errno set) thrown as an
 * {@link RdmaCmException} that carries the operation and errno's {@code strerror} text. This is the
 * hand-written companion of the generated {@code dev.rdmarpc.rdmacm.raw}; the connection-manager
 * layer builds on it.
 *
 * <p>Each {@code rdma_*} method is the C function of the same name with the same arguments;
 * functions returning 0 or -1 return nothing here. {@link #rdma_get_cm_event} returns
 * {@code false} instead of throwing when a non-blocking channel has no event (EAGAIN), an expected
 * condition. The rest of librdmacm ({@code rdma_destroy_qp}, {@code rdma_event_str},
 * {@code rdma_getaddrinfo}, ...) is called through the raw bindings.
 *
 * <p>Thread-safe; errno goes to {@link VerbsNative#callState()}, one segment per thread, so the
 * calls do not allocate after a thread's first. Each call first checks
 * {@link Rdmacm#ensureAvailability()}.
 */
public final class RdmaCmNative {
    private static final int EAGAIN = 11;

    private RdmaCmNative() {
    }

    /** Downcall handles of librdmacm; initialised (and the library loaded) on first use. */
    private static final class Downcalls {
        static final MethodHandle CREATE_EVENT_CHANNEL =
                capture(rdmacm_h.rdma_create_event_channel$address(), rdmacm_h.rdma_create_event_channel$descriptor());
        static final MethodHandle GET_CM_EVENT =
                capture(rdmacm_h.rdma_get_cm_event$address(), rdmacm_h.rdma_get_cm_event$descriptor());
        static final MethodHandle GET_DEVICES =
                capture(rdmacm_h.rdma_get_devices$address(), rdmacm_h.rdma_get_devices$descriptor());
        static final MethodHandle CREATE_ID =
                capture(rdmacm_h.rdma_create_id$address(), rdmacm_h.rdma_create_id$descriptor());
        static final MethodHandle DESTROY_ID =
                capture(rdmacm_h.rdma_destroy_id$address(), rdmacm_h.rdma_destroy_id$descriptor());
        static final MethodHandle BIND_ADDR =
                capture(rdmacm_h.rdma_bind_addr$address(), rdmacm_h.rdma_bind_addr$descriptor());
        static final MethodHandle RESOLVE_ADDR =
                capture(rdmacm_h.rdma_resolve_addr$address(), rdmacm_h.rdma_resolve_addr$descriptor());
        static final MethodHandle RESOLVE_ROUTE =
                capture(rdmacm_h.rdma_resolve_route$address(), rdmacm_h.rdma_resolve_route$descriptor());
        static final MethodHandle CREATE_QP =
                capture(rdmacm_h.rdma_create_qp$address(), rdmacm_h.rdma_create_qp$descriptor());
        static final MethodHandle CONNECT =
                capture(rdmacm_h.rdma_connect$address(), rdmacm_h.rdma_connect$descriptor());
        static final MethodHandle ESTABLISH =
                capture(rdmacm_h.rdma_establish$address(), rdmacm_h.rdma_establish$descriptor());
        static final MethodHandle LISTEN =
                capture(rdmacm_h.rdma_listen$address(), rdmacm_h.rdma_listen$descriptor());
        static final MethodHandle GET_REQUEST =
                capture(rdmacm_h.rdma_get_request$address(), rdmacm_h.rdma_get_request$descriptor());
        static final MethodHandle ACCEPT =
                capture(rdmacm_h.rdma_accept$address(), rdmacm_h.rdma_accept$descriptor());
        static final MethodHandle REJECT =
                capture(rdmacm_h.rdma_reject$address(), rdmacm_h.rdma_reject$descriptor());
        static final MethodHandle DISCONNECT =
                capture(rdmacm_h.rdma_disconnect$address(), rdmacm_h.rdma_disconnect$descriptor());
        static final MethodHandle ACK_CM_EVENT =
                capture(rdmacm_h.rdma_ack_cm_event$address(), rdmacm_h.rdma_ack_cm_event$descriptor());
        static final MethodHandle MIGRATE_ID =
                capture(rdmacm_h.rdma_migrate_id$address(), rdmacm_h.rdma_migrate_id$descriptor());
        static final MethodHandle SET_OPTION =
                capture(rdmacm_h.rdma_set_option$address(), rdmacm_h.rdma_set_option$descriptor());
        static final MethodHandle INIT_QP_ATTR =
                capture(rdmacm_h.rdma_init_qp_attr$address(), rdmacm_h.rdma_init_qp_attr$descriptor());
        static final MethodHandle CREATE_EP =
                capture(rdmacm_h.rdma_create_ep$address(), rdmacm_h.rdma_create_ep$descriptor());

        private static MethodHandle capture(MemorySegment function, FunctionDescriptor descriptor) {
            return VerbsNative.downcallCapturingErrno(function, descriptor);
        }
    }

    /**
     * {@code struct rdma_event_channel *rdma_create_event_channel(void)}: opens the rdma_cm device.
     *
     * @throws RdmaCmException with errno, e.g. ENOENT or ENODEV where the kernel has no RDMA CM
     */
    public static MemorySegment rdma_create_event_channel() {
        Rdmacm.ensureAvailability();
        MemorySegment state = VerbsNative.callState();
        MemorySegment channel;
        try {
            channel = (MemorySegment) Downcalls.CREATE_EVENT_CHANNEL.invokeExact(state);
        } catch (Throwable t) {
            throw new AssertionError("rdma_create_event_channel", t);
        }
        if (channel.address() == 0) {
            throw new RdmaCmException("rdma_create_event_channel", VerbsNative.errno(state));
        }
        return channel;
    }

    /**
     * {@code int rdma_get_cm_event(channel, struct rdma_cm_event **event)}: blocks unless the
     * channel's fd is non-blocking. Acknowledge each event with {@link #rdma_ack_cm_event}.
     *
     * @return {@code true} when {@code *event} was set, {@code false} when a non-blocking channel
     *         has no event (EAGAIN)
     */
    public static boolean rdma_get_cm_event(MemorySegment channel, MemorySegment event) {
        Rdmacm.ensureAvailability();
        requirePointer(channel, "channel");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.GET_CM_EVENT.invokeExact(state, channel, event);
        } catch (Throwable t) {
            throw new AssertionError("rdma_get_cm_event", t);
        }
        if (rc == 0) {
            return true;
        }
        int errno = VerbsNative.errno(state);
        if (errno == EAGAIN) {
            return false;
        }
        throw new RdmaCmException("rdma_get_cm_event", errno);
    }

    /**
     * {@code struct ibv_context **rdma_get_devices(int *num_devices)}: the NULL-terminated list of
     * RDMA devices, released with {@code rdma_free_devices}.
     */
    public static MemorySegment rdma_get_devices(MemorySegment numDevices) {
        Rdmacm.ensureAvailability();
        MemorySegment state = VerbsNative.callState();
        MemorySegment list;
        try {
            list = (MemorySegment) Downcalls.GET_DEVICES.invokeExact(state, numDevices);
        } catch (Throwable t) {
            throw new AssertionError("rdma_get_devices", t);
        }
        if (list.address() == 0) {
            throw new RdmaCmException("rdma_get_devices", VerbsNative.errno(state));
        }
        return list;
    }

    /** {@code int rdma_create_id(channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps)}; {@code *id} receives the new id. */
    public static void rdma_create_id(MemorySegment channel, MemorySegment id, MemorySegment context, int ps) {
        Rdmacm.ensureAvailability();
        requirePointer(channel, "channel");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.CREATE_ID.invokeExact(state, channel, id, context, ps);
        } catch (Throwable t) {
            throw new AssertionError("rdma_create_id", t);
        }
        zero("rdma_create_id", rc, state);
    }

    /** {@code int rdma_destroy_id(struct rdma_cm_id *id)}. */
    public static void rdma_destroy_id(MemorySegment id) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.DESTROY_ID.invokeExact(state, id);
        } catch (Throwable t) {
            throw new AssertionError("rdma_destroy_id", t);
        }
        zero("rdma_destroy_id", rc, state);
    }

    /** {@code int rdma_bind_addr(id, struct sockaddr *addr)}. */
    public static void rdma_bind_addr(MemorySegment id, MemorySegment addr) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.BIND_ADDR.invokeExact(state, id, addr);
        } catch (Throwable t) {
            throw new AssertionError("rdma_bind_addr", t);
        }
        zero("rdma_bind_addr", rc, state);
    }

    /** {@code int rdma_resolve_addr(id, src_addr, dst_addr, timeout_ms)}; src_addr may be NULL. */
    public static void rdma_resolve_addr(MemorySegment id, MemorySegment srcAddr, MemorySegment dstAddr, int timeoutMs) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.RESOLVE_ADDR.invokeExact(state, id, srcAddr, dstAddr, timeoutMs);
        } catch (Throwable t) {
            throw new AssertionError("rdma_resolve_addr", t);
        }
        zero("rdma_resolve_addr", rc, state);
    }

    /** {@code int rdma_resolve_route(id, timeout_ms)}. */
    public static void rdma_resolve_route(MemorySegment id, int timeoutMs) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.RESOLVE_ROUTE.invokeExact(state, id, timeoutMs);
        } catch (Throwable t) {
            throw new AssertionError("rdma_resolve_route", t);
        }
        zero("rdma_resolve_route", rc, state);
    }

    /** {@code int rdma_create_qp(id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)}; the QP is {@code id->qp}. */
    public static void rdma_create_qp(MemorySegment id, MemorySegment pd, MemorySegment qpInitAttr) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.CREATE_QP.invokeExact(state, id, pd, qpInitAttr);
        } catch (Throwable t) {
            throw new AssertionError("rdma_create_qp", t);
        }
        zero("rdma_create_qp", rc, state);
    }

    /** {@code int rdma_connect(id, struct rdma_conn_param *conn_param)}. */
    public static void rdma_connect(MemorySegment id, MemorySegment connParam) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.CONNECT.invokeExact(state, id, connParam);
        } catch (Throwable t) {
            throw new AssertionError("rdma_connect", t);
        }
        zero("rdma_connect", rc, state);
    }

    /** {@code int rdma_establish(id)}. */
    public static void rdma_establish(MemorySegment id) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.ESTABLISH.invokeExact(state, id);
        } catch (Throwable t) {
            throw new AssertionError("rdma_establish", t);
        }
        zero("rdma_establish", rc, state);
    }

    /** {@code int rdma_listen(id, backlog)}. */
    public static void rdma_listen(MemorySegment id, int backlog) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.LISTEN.invokeExact(state, id, backlog);
        } catch (Throwable t) {
            throw new AssertionError("rdma_listen", t);
        }
        zero("rdma_listen", rc, state);
    }

    /** {@code int rdma_get_request(listen, struct rdma_cm_id **id)}. */
    public static void rdma_get_request(MemorySegment listen, MemorySegment id) {
        Rdmacm.ensureAvailability();
        requirePointer(listen, "listen");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.GET_REQUEST.invokeExact(state, listen, id);
        } catch (Throwable t) {
            throw new AssertionError("rdma_get_request", t);
        }
        zero("rdma_get_request", rc, state);
    }

    /** {@code int rdma_accept(id, struct rdma_conn_param *conn_param)}. */
    public static void rdma_accept(MemorySegment id, MemorySegment connParam) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.ACCEPT.invokeExact(state, id, connParam);
        } catch (Throwable t) {
            throw new AssertionError("rdma_accept", t);
        }
        zero("rdma_accept", rc, state);
    }

    /** {@code int rdma_reject(id, const void *private_data, uint8_t private_data_len)}. */
    public static void rdma_reject(MemorySegment id, MemorySegment privateData, byte privateDataLen) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.REJECT.invokeExact(state, id, privateData, privateDataLen);
        } catch (Throwable t) {
            throw new AssertionError("rdma_reject", t);
        }
        zero("rdma_reject", rc, state);
    }

    /** {@code int rdma_disconnect(id)}. */
    public static void rdma_disconnect(MemorySegment id) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.DISCONNECT.invokeExact(state, id);
        } catch (Throwable t) {
            throw new AssertionError("rdma_disconnect", t);
        }
        zero("rdma_disconnect", rc, state);
    }

    /** {@code int rdma_ack_cm_event(struct rdma_cm_event *event)}. */
    public static void rdma_ack_cm_event(MemorySegment event) {
        Rdmacm.ensureAvailability();
        requirePointer(event, "event");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.ACK_CM_EVENT.invokeExact(state, event);
        } catch (Throwable t) {
            throw new AssertionError("rdma_ack_cm_event", t);
        }
        zero("rdma_ack_cm_event", rc, state);
    }

    /** {@code int rdma_migrate_id(id, channel)}. */
    public static void rdma_migrate_id(MemorySegment id, MemorySegment channel) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.MIGRATE_ID.invokeExact(state, id, channel);
        } catch (Throwable t) {
            throw new AssertionError("rdma_migrate_id", t);
        }
        zero("rdma_migrate_id", rc, state);
    }

    /** {@code int rdma_set_option(id, level, optname, void *optval, size_t optlen)}. */
    public static void rdma_set_option(MemorySegment id, int level, int optname, MemorySegment optval, long optlen) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.SET_OPTION.invokeExact(state, id, level, optname, optval, optlen);
        } catch (Throwable t) {
            throw new AssertionError("rdma_set_option", t);
        }
        zero("rdma_set_option", rc, state);
    }

    /** {@code int rdma_init_qp_attr(id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)}. */
    public static void rdma_init_qp_attr(MemorySegment id, MemorySegment qpAttr, MemorySegment qpAttrMask) {
        Rdmacm.ensureAvailability();
        requirePointer(id, "id");
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.INIT_QP_ATTR.invokeExact(state, id, qpAttr, qpAttrMask);
        } catch (Throwable t) {
            throw new AssertionError("rdma_init_qp_attr", t);
        }
        zero("rdma_init_qp_attr", rc, state);
    }

    /** {@code int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, pd, qp_init_attr)}. */
    public static void rdma_create_ep(MemorySegment id, MemorySegment res, MemorySegment pd, MemorySegment qpInitAttr) {
        Rdmacm.ensureAvailability();
        MemorySegment state = VerbsNative.callState();
        int rc;
        try {
            rc = (int) Downcalls.CREATE_EP.invokeExact(state, id, res, pd, qpInitAttr);
        } catch (Throwable t) {
            throw new AssertionError("rdma_create_ep", t);
        }
        zero("rdma_create_ep", rc, state);
    }

    private static void zero(String operation, int rc, MemorySegment state) {
        if (rc != 0) {
            throw new RdmaCmException(operation, VerbsNative.errno(state));
        }
    }

    private static void requirePointer(MemorySegment pointer, String name) {
        if (pointer == null || pointer.address() == 0) {
            throw new IllegalArgumentException(name + " is NULL");
        }
    }
}
