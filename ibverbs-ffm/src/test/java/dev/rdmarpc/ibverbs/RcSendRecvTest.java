package dev.rdmarpc.ibverbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.ibverbs.raw.ibv_ah_attr;
import dev.rdmarpc.ibverbs.raw.ibv_gid_entry;
import dev.rdmarpc.ibverbs.raw.ibv_global_route;
import dev.rdmarpc.ibverbs.raw.ibv_mr;
import dev.rdmarpc.ibverbs.raw.ibv_port_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp;
import dev.rdmarpc.ibverbs.raw.ibv_qp_attr;
import dev.rdmarpc.ibverbs.raw.ibv_qp_cap;
import dev.rdmarpc.ibverbs.raw.ibv_qp_init_attr;
import dev.rdmarpc.ibverbs.raw.ibv_recv_wr;
import dev.rdmarpc.ibverbs.raw.ibv_send_wr;
import dev.rdmarpc.ibverbs.raw.ibv_sge;
import dev.rdmarpc.ibverbs.raw.ibv_wc;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.testsupport.RdmaEnvironment;
import dev.rdmarpc.testsupport.RdmaTest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The first RDMA test, through the generated bindings only: list the two devices, open both,
 * query port state and the GID table, pick each side's RoCE v2 IPv4-mapped GID, connect two RC queue
 * pairs (one per device) by hand, exchange one SEND/RECV each way across the link between them.
 */
@RdmaTest
class RcSendRecvTest {
    private static final int BUFFER_SIZE = 4096;
    private static final long POLL_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60); // qemu TCG is slow

    @Test
    void sendRecvBetweenTwoDevicesOverRoceV2(RdmaEnvironment rdma) throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = VerbsNative.ibv_get_device_list(count);
            try {
                Map<String, MemorySegment> devices = new HashMap<>();
                MemorySegment array = list.reinterpret(ADDRESS.byteSize() * count.get(JAVA_INT, 0));
                for (int i = 0; i < count.get(JAVA_INT, 0); i++) {
                    MemorySegment device = array.getAtIndex(ADDRESS, i);
                    devices.put(ibverbs_h.ibv_get_device_name(device).reinterpret(64).getString(0), device);
                }
                assertTrue(devices.containsKey(rdma.device0()) && devices.containsKey(rdma.device1()),
                        "libibverbs lists " + devices.keySet());

                long txBefore = rdma.inVm() ? txPackets(rdma.device0(), rdma.port0()) : 0;
                try (Endpoint a = new Endpoint(devices.get(rdma.device0()), rdma.port0(), rdma.address0(), 0x1111);
                     Endpoint b = new Endpoint(devices.get(rdma.device1()), rdma.port1(), rdma.address1(), 0x2222)) {
                    assertTrue(a.gidIndex >= 0 && b.gidIndex >= 0);
                    a.postRecv(1);
                    b.postRecv(2);
                    a.connect(b);
                    b.connect(a);

                    byte[] ping = ("ping from " + rdma.device0() + " to " + rdma.device1()).getBytes(StandardCharsets.US_ASCII);
                    a.send(ping, 10);
                    assertCompletion(a.awaitCompletion(), ibverbs_h.IBV_WC_SEND(), 10, a.qpNum, -1);
                    assertCompletion(b.awaitCompletion(), ibverbs_h.IBV_WC_RECV(), 2, b.qpNum, ping.length);
                    assertArrayEquals(ping, b.received(ping.length));

                    byte[] pong = ("pong from " + rdma.device1()).getBytes(StandardCharsets.US_ASCII);
                    b.send(pong, 20);
                    assertCompletion(b.awaitCompletion(), ibverbs_h.IBV_WC_SEND(), 20, b.qpNum, -1);
                    assertCompletion(a.awaitCompletion(), ibverbs_h.IBV_WC_RECV(), 1, a.qpNum, pong.length);
                    assertArrayEquals(pong, a.received(pong.length));
                }
                if (rdma.inVm()) {
                    // The packets went over the wire between the two devices, not through a loopback shortcut.
                    assertTrue(txPackets(rdma.device0(), rdma.port0()) > txBefore,
                            "no packet left " + rdma.device0() + "'s netdev");
                }
            } finally {
                ibverbs_h.ibv_free_device_list(list);
            }
        }
    }

    private static void assertCompletion(MemorySegment wc, int opcode, long wrId, int qpNum, int byteLen) {
        assertEquals(ibverbs_h.IBV_WC_SUCCESS(), ibv_wc.status(wc),
                () -> "completion status " + ibverbs_h.ibv_wc_status_str(ibv_wc.status(wc)).reinterpret(64).getString(0));
        assertEquals(opcode, ibv_wc.opcode(wc));
        assertEquals(wrId, ibv_wc.wr_id(wc));
        assertEquals(qpNum, ibv_wc.qp_num(wc));
        if (byteLen >= 0) {
            assertEquals(byteLen, ibv_wc.byte_len(wc));
        }
    }

    /** tx_packets of the netdev behind the device's port (sysfs), to see traffic leave it. */
    private static long txPackets(String device, int port) throws IOException {
        Path ndevs = Path.of("/sys/class/infiniband", device, "ports", Integer.toString(port), "gid_attrs", "ndevs", "0");
        String netdev = Files.readString(ndevs).trim();
        return Long.parseLong(Files.readString(Path.of("/sys/class/net", netdev, "statistics", "tx_packets")).trim());
    }

    /** One side: device context, PD, registered buffer, CQ and RC QP. Closes in reverse order of creation. */
    private static final class Endpoint implements AutoCloseable {
        private final Arena arena = Arena.ofConfined();
        private final List<Runnable> closers = new ArrayList<>();
        private final int port;
        private final int psn;
        private final MemorySegment context;
        private final MemorySegment buffer;
        private final MemorySegment mr;
        private final MemorySegment cq;
        private final MemorySegment qp;
        private final MemorySegment wc = ibv_wc.allocate(arena);
        private final MemorySegment badWr = arena.allocate(ADDRESS);
        final int qpNum;
        final int gidIndex;
        final byte[] gid;
        final int activeMtu;

        Endpoint(MemorySegment device, int port, String ipv4, int psn) throws IOException {
            this.port = port;
            this.psn = psn;
            try {
                context = VerbsNative.ibv_open_device(device);
                closers.add(() -> VerbsNative.check("ibv_close_device", ibverbs_h.ibv_close_device(context)));

                MemorySegment portAttr = ibv_port_attr.allocate(arena);
                VerbsNative.check("ibv_query_port", VerbsInline.ibv_query_port(context, (byte) port, portAttr));
                assertEquals(ibverbs_h.IBV_PORT_ACTIVE(), ibv_port_attr.state(portAttr), "port state");
                assertEquals(ibverbs_h.IBV_LINK_LAYER_ETHERNET(), ibv_port_attr.link_layer(portAttr), "link layer");
                activeMtu = ibv_port_attr.active_mtu(portAttr);

                // The GID table: the RoCE v2 entry whose GID is ::ffff:<ipv4> on this port.
                int tableLength = ibv_port_attr.gid_tbl_len(portAttr);
                MemorySegment entries = ibv_gid_entry.allocateArray(tableLength, arena);
                long valid = ibverbs_h._ibv_query_gid_table(context, entries, tableLength, 0, ibv_gid_entry.sizeof());
                assertTrue(valid > 0, "_ibv_query_gid_table returned " + valid);
                byte[] wanted = ipv4MappedGid(ipv4);
                int index = -1;
                for (int i = 0; i < valid; i++) {
                    MemorySegment e = ibv_gid_entry.asSlice(entries, i);
                    if (ibv_gid_entry.port_num(e) == port && ibv_gid_entry.gid_type(e) == ibverbs_h.IBV_GID_TYPE_ROCE_V2()
                            && Arrays.equals(wanted, ibv_gid_entry.gid(e).toArray(JAVA_BYTE))) {
                        index = ibv_gid_entry.gid_index(e);
                    }
                }
                assertTrue(index >= 0, "no RoCE v2 GID for " + ipv4 + " among " + valid + " GID entries");
                // ibv_query_gid agrees with the table.
                MemorySegment queried = arena.allocate(16);
                VerbsNative.ibv_query_gid(context, (byte) port, index, queried);
                assertArrayEquals(wanted, queried.toArray(JAVA_BYTE));
                gidIndex = index;
                gid = wanted;

                MemorySegment pd = VerbsNative.ibv_alloc_pd(context);
                closers.add(() -> VerbsNative.check("ibv_dealloc_pd", ibverbs_h.ibv_dealloc_pd(pd)));
                buffer = arena.allocate(BUFFER_SIZE, 4096);
                mr = VerbsNative.ibv_reg_mr(pd, buffer, BUFFER_SIZE, ibverbs_h.IBV_ACCESS_LOCAL_WRITE())
                        .reinterpret(ibv_mr.sizeof());
                closers.add(() -> VerbsNative.check("ibv_dereg_mr", ibverbs_h.ibv_dereg_mr(mr)));
                cq = VerbsNative.ibv_create_cq(context, 16, MemorySegment.NULL, MemorySegment.NULL, 0);
                closers.add(() -> VerbsNative.check("ibv_destroy_cq", ibverbs_h.ibv_destroy_cq(cq)));

                MemorySegment init = ibv_qp_init_attr.allocate(arena);
                ibv_qp_init_attr.send_cq(init, cq);
                ibv_qp_init_attr.recv_cq(init, cq);
                ibv_qp_init_attr.qp_type(init, ibverbs_h.IBV_QPT_RC());
                MemorySegment cap = ibv_qp_init_attr.cap(init);
                ibv_qp_cap.max_send_wr(cap, 4);
                ibv_qp_cap.max_recv_wr(cap, 4);
                ibv_qp_cap.max_send_sge(cap, 1);
                ibv_qp_cap.max_recv_sge(cap, 1);
                qp = VerbsNative.ibv_create_qp(pd, init).reinterpret(ibv_qp.sizeof());
                closers.add(() -> VerbsNative.check("ibv_destroy_qp", ibverbs_h.ibv_destroy_qp(qp)));
                qpNum = ibv_qp.qp_num(qp);

                MemorySegment attr = ibv_qp_attr.allocate(arena);
                ibv_qp_attr.qp_state(attr, ibverbs_h.IBV_QPS_INIT());
                ibv_qp_attr.pkey_index(attr, (short) 0);
                ibv_qp_attr.port_num(attr, (byte) port);
                ibv_qp_attr.qp_access_flags(attr, 0);
                modify(attr, ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_PKEY_INDEX() | ibverbs_h.IBV_QP_PORT()
                        | ibverbs_h.IBV_QP_ACCESS_FLAGS());
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        /** INIT -> RTR -> RTS towards {@code remote}: the address vector carries its GID (RoCE needs a GRH). */
        void connect(Endpoint remote) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            ibv_qp_attr.qp_state(attr, ibverbs_h.IBV_QPS_RTR());
            ibv_qp_attr.path_mtu(attr, Math.min(activeMtu, remote.activeMtu));
            ibv_qp_attr.dest_qp_num(attr, remote.qpNum);
            ibv_qp_attr.rq_psn(attr, remote.psn);
            ibv_qp_attr.max_dest_rd_atomic(attr, (byte) 1);
            ibv_qp_attr.min_rnr_timer(attr, (byte) 12);
            MemorySegment ah = ibv_qp_attr.ah_attr(attr);
            ibv_ah_attr.is_global(ah, (byte) 1);
            ibv_ah_attr.port_num(ah, (byte) port);
            MemorySegment grh = ibv_ah_attr.grh(ah);
            ibv_global_route.dgid(grh, MemorySegment.ofArray(remote.gid));
            ibv_global_route.sgid_index(grh, (byte) gidIndex);
            ibv_global_route.hop_limit(grh, (byte) 64);
            modify(attr, ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_AV() | ibverbs_h.IBV_QP_PATH_MTU()
                    | ibverbs_h.IBV_QP_DEST_QPN() | ibverbs_h.IBV_QP_RQ_PSN() | ibverbs_h.IBV_QP_MAX_DEST_RD_ATOMIC()
                    | ibverbs_h.IBV_QP_MIN_RNR_TIMER());

            attr.fill((byte) 0);
            ibv_qp_attr.qp_state(attr, ibverbs_h.IBV_QPS_RTS());
            ibv_qp_attr.sq_psn(attr, psn);
            ibv_qp_attr.timeout(attr, (byte) 14);
            ibv_qp_attr.retry_cnt(attr, (byte) 7);
            ibv_qp_attr.rnr_retry(attr, (byte) 7);
            ibv_qp_attr.max_rd_atomic(attr, (byte) 1);
            modify(attr, ibverbs_h.IBV_QP_STATE() | ibverbs_h.IBV_QP_SQ_PSN() | ibverbs_h.IBV_QP_TIMEOUT()
                    | ibverbs_h.IBV_QP_RETRY_CNT() | ibverbs_h.IBV_QP_RNR_RETRY() | ibverbs_h.IBV_QP_MAX_QP_RD_ATOMIC());
            assertEquals(ibverbs_h.IBV_QPS_RTS(), ibv_qp.state(qp));
        }

        private void modify(MemorySegment attr, int mask) {
            VerbsNative.check("ibv_modify_qp", ibverbs_h.ibv_modify_qp(qp, attr, mask));
        }

        /** Receives into the upper half of the buffer. */
        void postRecv(long wrId) {
            MemorySegment sge = ibv_sge.allocate(arena);
            ibv_sge.addr(sge, buffer.address() + BUFFER_SIZE / 2);
            ibv_sge.length(sge, BUFFER_SIZE / 2);
            ibv_sge.lkey(sge, ibv_mr.lkey(mr));
            MemorySegment wr = ibv_recv_wr.allocate(arena);
            ibv_recv_wr.wr_id(wr, wrId);
            ibv_recv_wr.sg_list(wr, sge);
            ibv_recv_wr.num_sge(wr, 1);
            VerbsNative.check("ibv_post_recv", VerbsInline.ibv_post_recv(qp, wr, badWr));
        }

        /** Sends {@code message} from the lower half of the buffer, signalled. */
        void send(byte[] message, long wrId) {
            MemorySegment.copy(MemorySegment.ofArray(message), 0, buffer, 0, message.length);
            MemorySegment sge = ibv_sge.allocate(arena);
            ibv_sge.addr(sge, buffer.address());
            ibv_sge.length(sge, message.length);
            ibv_sge.lkey(sge, ibv_mr.lkey(mr));
            MemorySegment wr = ibv_send_wr.allocate(arena);
            ibv_send_wr.wr_id(wr, wrId);
            ibv_send_wr.sg_list(wr, sge);
            ibv_send_wr.num_sge(wr, 1);
            ibv_send_wr.opcode(wr, ibverbs_h.IBV_WR_SEND());
            ibv_send_wr.send_flags(wr, ibverbs_h.IBV_SEND_SIGNALED());
            VerbsNative.check("ibv_post_send", VerbsInline.ibv_post_send(qp, wr, badWr));
        }

        byte[] received(int length) {
            return buffer.asSlice(BUFFER_SIZE / 2, length).toArray(JAVA_BYTE);
        }

        /** Polls the CQ until one completion arrives (or the deadline passes); returns it. */
        MemorySegment awaitCompletion() throws InterruptedException {
            long deadline = System.nanoTime() + POLL_DEADLINE_NANOS;
            while (System.nanoTime() < deadline) {
                int n = VerbsInline.ibv_poll_cq(cq, 1, wc);
                assertTrue(n >= 0, "ibv_poll_cq returned " + n);
                if (n == 1) {
                    return wc;
                }
                Thread.sleep(1);
            }
            throw new AssertionError("no completion within " + TimeUnit.NANOSECONDS.toSeconds(POLL_DEADLINE_NANOS) + " s");
        }

        @Override
        public void close() {
            RuntimeException failure = null;
            for (int i = closers.size() - 1; i >= 0; i--) {
                try {
                    closers.get(i).run();
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            closers.clear();
            arena.close(); // after ibv_dereg_mr: the registered buffer lives in this arena
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** {@code ::ffff:a.b.c.d} as the 16 bytes of a GID. */
    static byte[] ipv4MappedGid(String ipv4) throws IOException {
        byte[] v4 = InetAddress.getByName(ipv4).getAddress();
        assertEquals(4, v4.length, ipv4 + " is not an IPv4 address");
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        System.arraycopy(v4, 0, gid, 12, 4);
        return gid;
    }
}
