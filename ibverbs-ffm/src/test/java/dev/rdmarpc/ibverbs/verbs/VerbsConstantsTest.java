package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.ToIntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The enums of the verbs layer carry their C values as literals (so that they load without
 * libibverbs); here each is checked against the generated constant of the same name.
 */
class VerbsConstantsTest {
    @BeforeAll
    static void library() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
    }

    private static int c(String name) {
        try {
            return (int) ibverbs_h.class.getMethod(name).invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("ibverbs_h has no " + name, e);
        }
    }

    private static <E extends Enum<E>> void check(Class<E> type, String prefix, ToIntFunction<E> value, Set<E> skip) {
        int checked = 0;
        for (E e : type.getEnumConstants()) {
            if (skip.contains(e)) {
                continue;
            }
            assertEquals(c(prefix + e.name()), value.applyAsInt(e), type.getSimpleName() + "." + e);
            checked++;
        }
        assertEquals(type.getEnumConstants().length - skip.size(), checked);
    }

    @Test
    void completionStatusesAndOpcodes() {
        check(WcStatus.class, "IBV_WC_", WcStatus::value, EnumSet.of(WcStatus.UNKNOWN));
        check(WcOpcode.class, "IBV_WC_", WcOpcode::value, EnumSet.of(WcOpcode.UNKNOWN));
        for (WcStatus s : WcStatus.values()) {
            assertSame(s, WcStatus.of(s.value()));
        }
        for (WcOpcode o : WcOpcode.values()) {
            assertSame(o, WcOpcode.of(o.value()));
        }
        assertSame(WcStatus.UNKNOWN, WcStatus.of(99));
        assertSame(WcOpcode.UNKNOWN, WcOpcode.of(8));
        assertEquals(true, WcOpcode.RECV_RDMA_WITH_IMM.isReceive());
        assertEquals(false, WcOpcode.RDMA_READ.isReceive());
    }

    @Test
    void statusTextIsLibibverbsOwn() {
        assertEquals(ibverbs_h.ibv_wc_status_str(10).getString(0), WcStatus.REM_ACCESS_ERR.text());
        assertEquals("remote access error", WcStatus.REM_ACCESS_ERR.text());
        assertEquals("success", WcStatus.SUCCESS.text());
        assertEquals("RNR retry counter exceeded", WcStatus.RNR_RETRY_EXC_ERR.text());
        assertEquals("Work Request Flushed Error", WcStatus.WR_FLUSH_ERR.text());
        assertEquals("port active", AsyncEventType.PORT_ACTIVE.text());
    }

    @Test
    void workRequestOpcodesAndFlags() {
        check(SendOpcode.class, "IBV_WR_", SendOpcode::value, EnumSet.noneOf(SendOpcode.class));
        assertEquals(c("IBV_SEND_FENCE"), SendWorkRequest.FENCE);
        assertEquals(c("IBV_SEND_SIGNALED"), SendWorkRequest.SIGNALED);
        assertEquals(c("IBV_SEND_SOLICITED"), SendWorkRequest.SOLICITED);
        assertEquals(c("IBV_SEND_INLINE"), SendWorkRequest.INLINE);
        assertEquals(c("IBV_WC_WITH_IMM"), WorkCompletions.WITH_IMM);
        assertEquals(c("IBV_WC_GRH"), WorkCompletions.GRH);
        assertEquals(c("IBV_WC_WITH_INV"), WorkCompletions.WITH_INV);
        assertNull(SendOpcode.of(42));
    }

    @Test
    void accessFlags() {
        check(Access.class, "IBV_ACCESS_", Access::bit, EnumSet.noneOf(Access.class));
        assertEquals(c("IBV_ACCESS_LOCAL_WRITE") | c("IBV_ACCESS_REMOTE_WRITE") | c("IBV_ACCESS_REMOTE_READ"),
                Access.LOCAL_REMOTE_READ_WRITE);
        assertEquals(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE),
                Access.of(Access.LOCAL_REMOTE_READ_WRITE));
        assertEquals(Access.LOCAL_REMOTE_READ_WRITE, Access.flags(Access.of(Access.LOCAL_REMOTE_READ_WRITE)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Access.of(1 << 12));
        assertEquals("unknown access bits 0x1000", e.getMessage());
    }

    @Test
    void statesTypesAndEvents() {
        check(AsyncEventType.class, "IBV_EVENT_", AsyncEventType::value, EnumSet.of(AsyncEventType.UNKNOWN));
        check(QpState.class, "IBV_QPS_", QpState::value, EnumSet.noneOf(QpState.class));
        check(PortState.class, "IBV_PORT_", PortState::value, EnumSet.of(PortState.UNKNOWN));
        check(Mtu.class, "IBV_", Mtu::value, EnumSet.noneOf(Mtu.class));
        check(NodeType.class, "IBV_NODE_", NodeType::value, EnumSet.noneOf(NodeType.class));
        check(GidType.class, "IBV_GID_TYPE_", GidType::ordinal, EnumSet.of(GidType.UNKNOWN));
        check(LinkLayer.class, "IBV_LINK_LAYER_", LinkLayer::ordinal, EnumSet.of(LinkLayer.UNKNOWN));
        check(ForkStatus.class, "IBV_FORK_", ForkStatus::ordinal, EnumSet.noneOf(ForkStatus.class));
        assertEquals(c("IBV_QPT_RC"), QpType.RC.value());
        assertEquals(c("IBV_QPT_UC"), QpType.UC.value());
        assertEquals(4096, Mtu.of(5).bytes());
        assertSame(Mtu.MTU_1024, Mtu.ofBytes(1024));
        assertSame(Mtu.MTU_1024, Mtu.MTU_4096.min(Mtu.MTU_1024));
        assertThrows(IllegalArgumentException.class, () -> Mtu.ofBytes(1500));
        assertThrows(IllegalArgumentException.class, () -> Mtu.of(0));
    }
}
