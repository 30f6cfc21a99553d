package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.Ibverbs;
import dev.rdmarpc.ibverbs.raw.ibv_mw_bind_info;
import dev.rdmarpc.ibverbs.raw.ibv_recv_wr;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;
import dev.rdmarpc.ibverbs.raw.ibv_sge;
import dev.rdmarpc.ibverbs.raw.ibv_wc;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native flyweights without a device: what the setters write is read back through the generated
 * struct accessors (so the offsets are jextract's, and the C layout is checked by the layout probe);
 * chains, failure indexes, immediate byte order, GIDs and endpoints.
 */
class WorkRequestLayoutTest {
    @BeforeAll
    static void library() {
        assumeTrue(Ibverbs.isAvailable(), "libibverbs not loadable");
    }

    @Test
    void sendWorkRequestsAreWrittenWhereLibibverbsReadsThem() {
        try (SendWorkRequests wrs = new SendWorkRequests(4, 3)) {
            MemorySegment base = wrs.segment();
            long sgeBase = wrs.sgeSegment().address();
            for (int i = 0; i < 4; i++) {
                MemorySegment wr = ibv_send_wr.asSlice(base, i);
                assertEquals(sgeBase + i * 3 * ibv_sge.sizeof(), ibv_send_wr.sg_list(wr).address(), "sg_list " + i);
            }
            SendWorkRequest w = wrs.get(2).clear().wrId(0x1122334455667788L)
                    .opcode(SendOpcode.RDMA_WRITE_WITH_IMM).remote(0xABCDEF0123L, 0x77)
                    .immData(0x01020304).signaled(true).solicited(true)
                    .sge(0, 0x1000, 10, 5).sge(2, 0x3000, 30, 7).sgeCount(3);
            assertSame(w, wrs.get(2));
            assertEquals(2, w.index());
            MemorySegment wr = ibv_send_wr.asSlice(base, 2);
            assertEquals(0x1122334455667788L, ibv_send_wr.wr_id(wr));
            assertEquals(1, ibv_send_wr.opcode(wr)); // IBV_WR_RDMA_WRITE_WITH_IMM
            assertEquals(SendWorkRequest.SIGNALED | SendWorkRequest.SOLICITED, ibv_send_wr.send_flags(wr));
            assertEquals(0x04030201, ibv_send_wr.imm_data(wr), "imm_data is big-endian in memory");
            MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr));
            assertEquals(0xABCDEF0123L, ibv_send_wr.wr.rdma.remote_addr(rdma));
            assertEquals(0x77, ibv_send_wr.wr.rdma.rkey(rdma));
            assertEquals(3, ibv_send_wr.num_sge(wr));
            MemorySegment sges = ibv_send_wr.sg_list(wr).reinterpret(3 * ibv_sge.sizeof());
            assertEquals(0x1000, ibv_sge.addr(ibv_sge.asSlice(sges, 0)));
            assertEquals(10, ibv_sge.length(ibv_sge.asSlice(sges, 0)));
            assertEquals(5, ibv_sge.lkey(ibv_sge.asSlice(sges, 0)));
            assertEquals(0x3000, ibv_sge.addr(ibv_sge.asSlice(sges, 2)));
            assertEquals(7, ibv_sge.lkey(ibv_sge.asSlice(sges, 2)));
            assertEquals(0x3000, w.sgeAddress(2), "the getters read what libibverbs reads");
            assertEquals(30, w.sgeLength(2));
            assertEquals(7, w.sgeLkey(2));
            assertEquals(0x1000, w.sgeAddress(0));
            assertThrows(IndexOutOfBoundsException.class, () -> w.sgeAddress(3));

            w.signaled(false).inline(true);
            assertEquals(SendWorkRequest.SOLICITED | SendWorkRequest.INLINE, w.flags());
            wrs.get(1).clear().wrId(9).atomic(0x40, 3, 11, 22).opcode(SendOpcode.ATOMIC_CMP_AND_SWP);
            MemorySegment atomic = ibv_send_wr.wr.atomic(ibv_send_wr.wr(ibv_send_wr.asSlice(base, 1)));
            assertEquals(0x40, ibv_send_wr.wr.atomic.remote_addr(atomic));
            assertEquals(11, ibv_send_wr.wr.atomic.compare_add(atomic));
            assertEquals(22, ibv_send_wr.wr.atomic.swap(atomic));
            assertEquals(3, ibv_send_wr.wr.atomic.rkey(atomic));

            // clear() keeps the SGE link
            wrs.get(2).clear();
            assertEquals(0, ibv_send_wr.wr_id(wr));
            assertEquals(0, ibv_send_wr.num_sge(wr));
            assertEquals(sgeBase + 2 * 3 * ibv_sge.sizeof(), ibv_send_wr.sg_list(wr).address());

            assertThrows(IndexOutOfBoundsException.class, () -> wrs.get(4));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.get(0).sge(3, 0, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.get(0).sgeCount(4));
        }
    }

    @Test
    void memoryWindowBindsAndInvalidationsAreWrittenWhereLibibverbsReadsThem() {
        try (SendWorkRequests wrs = new SendWorkRequests(2, 2); Arena arena = Arena.ofConfined()) {
            MemorySegment fakeMw = arena.allocate(64, 8);
            MemorySegment fakeMr = arena.allocate(64, 8);
            MemorySegment wr = ibv_send_wr.asSlice(wrs.segment(), 1);
            // a leftover immediate and SGE of an earlier use: a bind must not carry them (rxe refuses imm_data)
            SendWorkRequest w = wrs.get(1).clear().immData(0x0BADF00D).sge(0, 0x1000, 8, 1).sgeCount(1)
                    .wrId(42).signaled(true)
                    .bindMemoryWindow(fakeMw, 0x00ABCD17, fakeMr, 0x7F00_1234_5000L, 3000, Access.REMOTE_READ.bit());
            assertSame(w, wrs.get(1));
            assertEquals(8, ibv_send_wr.opcode(wr)); // IBV_WR_BIND_MW
            assertEquals(SendOpcode.BIND_MW, w.opcode());
            assertEquals(42, ibv_send_wr.wr_id(wr));
            assertEquals(SendWorkRequest.SIGNALED, ibv_send_wr.send_flags(wr));
            assertEquals(0, ibv_send_wr.num_sge(wr), "a bind has no SGE");
            assertEquals(0, ibv_send_wr.imm_data(wr), "nor immediate data");
            MemorySegment bind = ibv_send_wr.bind_mw(wr);
            assertEquals(fakeMw.address(), ibv_send_wr.bind_mw.mw(bind).address());
            assertEquals(0x00ABCD17, ibv_send_wr.bind_mw.rkey(bind));
            MemorySegment info = ibv_send_wr.bind_mw.bind_info(bind);
            assertEquals(fakeMr.address(), ibv_mw_bind_info.mr(info).address());
            assertEquals(0x7F00_1234_5000L, ibv_mw_bind_info.addr(info));
            assertEquals(3000, ibv_mw_bind_info.length(info));
            assertEquals(Access.REMOTE_READ.bit(), ibv_mw_bind_info.mw_access_flags(info));
            assertEquals(SendWorkRequests.Offsets.BIND_MW_RKEY, ibv_send_wr.bind_mw$offset()
                    + ibv_send_wr.bind_mw.rkey$offset(), "the flyweight's offset is the generated one");

            // clear() leaves no binding behind
            w.clear();
            assertEquals(0, ibv_send_wr.opcode(wr));
            assertEquals(0, ibv_send_wr.bind_mw.mw(bind).address());
            assertEquals(0, ibv_send_wr.bind_mw.rkey(bind));
            assertEquals(0, ibv_mw_bind_info.mr(info).address());
            assertEquals(0, ibv_mw_bind_info.addr(info));
            assertEquals(0, ibv_mw_bind_info.length(info));
            assertEquals(0, ibv_mw_bind_info.mw_access_flags(info));
            assertEquals(wrs.sgeSegment().address() + 2 * ibv_sge.sizeof(), ibv_send_wr.sg_list(wr).address());

            // invalidate_rkey shares imm_data's bytes but is host order: written as given, not swapped
            w.sge(0, 0x2000, 16, 3).sgeCount(1).localInvalidate(0x12345678);
            assertEquals(7, ibv_send_wr.opcode(wr)); // IBV_WR_LOCAL_INV
            assertEquals(0, ibv_send_wr.num_sge(wr), "LOCAL_INV has no SGE");
            assertEquals(0x12345678, ibv_send_wr.invalidate_rkey(wr));
            assertEquals(0x12345678, ibv_send_wr.imm_data(wr), "the same four bytes, unswapped");
            w.clear().opcode(SendOpcode.SEND_WITH_INV).sge(0, 0x3000, 64, 9).sgeCount(1).invalidate(0xCAFEBA17);
            assertEquals(9, ibv_send_wr.opcode(wr)); // IBV_WR_SEND_WITH_INV
            assertEquals(0xCAFEBA17, ibv_send_wr.invalidate_rkey(wr));
            w.immData(0xCAFEBA17);
            assertEquals(Integer.reverseBytes(0xCAFEBA17), ibv_send_wr.invalidate_rkey(wr),
                    "the immediate, unlike the key, is swapped to big-endian");

            assertThrows(IllegalArgumentException.class,
                    () -> w.bindMemoryWindow(MemorySegment.NULL, 1, fakeMr, 0, 1, 0));
            assertThrows(IllegalArgumentException.class,
                    () -> w.bindMemoryWindow(fakeMw, 1, MemorySegment.NULL, 0, 1, 0));
        }
    }

    @Test
    void postingLinksTheChosenRangeAndFailedIndexFindsTheBadOne() {
        try (SendWorkRequests wrs = new SendWorkRequests(5, 1)) {
            long head = wrs.link(1, 3);
            MemorySegment base = wrs.segment();
            assertEquals(ibv_send_wr.asSlice(base, 1).address(), head);
            assertEquals(ibv_send_wr.asSlice(base, 2).address(), ibv_send_wr.next(ibv_send_wr.asSlice(base, 1)).address());
            assertEquals(ibv_send_wr.asSlice(base, 3).address(), ibv_send_wr.next(ibv_send_wr.asSlice(base, 2)).address());
            assertEquals(0, ibv_send_wr.next(ibv_send_wr.asSlice(base, 3)).address());
            assertEquals(-1, wrs.failedIndex());
            // what a provider does on failure: *bad_wr = the first not posted
            MemorySegment.ofAddress(wrs.badWrAddress()).reinterpret(8).set(ADDRESS, 0, ibv_send_wr.asSlice(base, 2));
            assertEquals(2, wrs.failedIndex());
            wrs.link(0, 1); // the next post clears it
            assertEquals(-1, wrs.failedIndex());
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.link(3, 3));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.link(0, 0));
        }
        try (ReceiveWorkRequests rwrs = new ReceiveWorkRequests(3, 2)) {
            rwrs.get(0).wrId(5).sge(0, 0x10, 16, 1).sge(1, 0x20, 32, 2).sgeCount(2);
            long head = rwrs.link(0, 3);
            MemorySegment wr = ibv_recv_wr.asSlice(rwrs.segment(), 0);
            assertEquals(wr.address(), head);
            assertEquals(5, ibv_recv_wr.wr_id(wr));
            assertEquals(2, ibv_recv_wr.num_sge(wr));
            MemorySegment sges = ibv_recv_wr.sg_list(wr).reinterpret(2 * ibv_sge.sizeof());
            assertEquals(0x20, ibv_sge.addr(ibv_sge.asSlice(sges, 1)));
            assertEquals(32, ibv_sge.length(ibv_sge.asSlice(sges, 1)));
            assertEquals(ibv_recv_wr.asSlice(rwrs.segment(), 1).address(), ibv_recv_wr.next(wr).address());
            assertEquals(0, ibv_recv_wr.next(ibv_recv_wr.asSlice(rwrs.segment(), 2)).address());
        }
    }

    @Test
    void workCompletionsReadWhatTheProviderWrites() {
        try (WorkCompletions wc = new WorkCompletions(2)) {
            MemorySegment e = ibv_wc.asSlice(wc.segment(), 1);
            ibv_wc.wr_id(e, 77);
            ibv_wc.status(e, 10);
            ibv_wc.opcode(e, 129);
            ibv_wc.byte_len(e, 4096);
            ibv_wc.imm_data(e, Integer.reverseBytes(0xCAFE0001)); // big-endian, as on the wire
            ibv_wc.wc_flags(e, WorkCompletions.WITH_IMM);
            ibv_wc.qp_num(e, 0x11);
            ibv_wc.src_qp(e, 0x22);
            ibv_wc.vendor_err(e, 3);
            assertEquals(77, wc.wrId(1));
            assertSame(WcStatus.REM_ACCESS_ERR, wc.status(1));
            assertFalse(wc.isSuccess(1));
            assertSame(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(1));
            assertEquals(4096, wc.byteLength(1));
            assertTrue(wc.hasImmData(1));
            assertEquals(0xCAFE0001, wc.immData(1));
            assertEquals(0x11, wc.qpNum(1));
            assertEquals(0x22, wc.srcQp(1));
            assertEquals(3, wc.vendorError(1));
            assertTrue(wc.describe(1).contains("REM_ACCESS_ERR (remote access error)"), wc.describe(1));
            assertThrows(IndexOutOfBoundsException.class, () -> wc.wrId(2));
            assertThrows(IndexOutOfBoundsException.class, () -> wc.pollAddress(3));
            assertEquals(wc.segment().address(), wc.pollAddress(2));
        }
        try (WorkCompletions wc = new WorkCompletions(1)) {
            MemorySegment e = ibv_wc.asSlice(wc.segment(), 0);
            ibv_wc.wr_id(e, 5);
            ibv_wc.opcode(e, 128);
            ibv_wc.wc_flags(e, WorkCompletions.WITH_INV);
            ibv_wc.invalidated_rkey(e, 0x00ABCD18); // host order, as libibverbs stores it
            assertTrue(wc.hasInvalidate(0));
            assertFalse(wc.hasImmData(0));
            assertEquals(0x00ABCD18, wc.invalidatedRkey(0));
            assertEquals(0x00ABCD18, ibv_wc.imm_data(e), "a union with imm_data");
            assertTrue(wc.describe(0).endsWith(" inv 0xabcd18 qp 0"), wc.describe(0));
            ibv_wc.wc_flags(e, WorkCompletions.WITH_IMM);
            assertFalse(wc.hasInvalidate(0));
        }
        WorkCompletions closed = new WorkCompletions(1);
        closed.close();
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.pollAddress(1));
    }

    @Test
    void gidsAndEndpoints() throws Exception {
        Gid v4 = Gid.of(InetAddress.getByName("198.18.0.1"));
        assertTrue(v4.isIpv4Mapped());
        assertEquals("0:0:0:0:0:ffff:c612:1", v4.toString());
        assertEquals(InetAddress.getByName("198.18.0.1"), v4.toInetAddress());
        assertEquals(0xffffc6120001L, v4.interfaceId());
        Gid v6 = Gid.of(InetAddress.getByName("fe80::1"));
        assertFalse(v6.isIpv4Mapped());
        assertEquals(0xfe80000000000000L, v6.subnetPrefix());
        assertTrue(Gid.ZERO.isZero());
        assertThrows(IllegalArgumentException.class, () -> Gid.of(new byte[4]));

        QpEndpoint ep = new QpEndpoint(0xABCDEF, 0x123456, v4, 0xBEEF);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(QpEndpoint.BYTES + 3);
            ep.write(buf, 3);
            assertEquals(ep, QpEndpoint.read(buf, 3));
            assertEquals((byte) 0xAB, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4), "big-endian QPN");
        }
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(1 << 24, 0, v4, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(1, 1 << 24, v4, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(1, 1, null, 0));
        assertEquals("0002:c903:00fe:1234", DeviceInfo.formatGuid(0x0002c90300fe1234L));
    }

    @Test
    void connectionAttributesValidateEveryRange() {
        new ConnectionAttributes().validate();
        assertEquals("rnrRetry must be 0 to 7, not 8",
                assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().rnrRetry(8).validate())
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().hopLimit(0).validate());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().timeout(32).validate());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().minRnrTimer(-1).validate());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().localPsn(1 << 24).validate());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().port(0).validate());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionAttributes().accessFlags(1 << 15).validate());
        assertEquals(64, new ConnectionAttributes().hopLimit(), "a GRH hop limit that survives routers");
    }

    @Test
    void badSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new SendWorkRequests(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new ReceiveWorkRequests(1, 0));
        assertThrows(IllegalArgumentException.class, () -> new WorkCompletions(0));
        long before = VerbsResources.live(ResourceKind.NATIVE_BUFFER);
        SendWorkRequests wrs = new SendWorkRequests(1, 1);
        assertEquals(before + 1, VerbsResources.live(ResourceKind.NATIVE_BUFFER));
        wrs.close();
        wrs.close();
        assertEquals(before, VerbsResources.live(ResourceKind.NATIVE_BUFFER));
        assertThrows(IllegalStateException.class, () -> wrs.link(0, 1), "a closed batch cannot be posted");
    }
}
