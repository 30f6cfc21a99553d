package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real RDMA between the two Soft-RoCE devices of the test VM: rxe0 (198.18.0.1, veth0) and rxe1
 * (198.18.0.2, veth1), RC queue pairs connected in-process by exchanging {@link QpEndpoint}s.
 */
@RdmaTest
class VerbsRdmaTest {
    private Map<ResourceKind, Long> before;
    private RdmaSide a;
    private RdmaSide b;

    @BeforeEach
    void sides() {
        before = VerbsResources.snapshot();
        a = new RdmaSide(RdmaDevices.DEV0, RdmaDevices.ADDR0, 0x1001, init -> { });
        b = new RdmaSide(RdmaDevices.DEV1, RdmaDevices.ADDR1, 0x2002, init -> { });
    }

    @AfterEach
    void close() {
        if (b != null) {
            b.close();
        }
        if (a != null) {
            a.close();
        }
        if (before != null) {
            assertEquals(before, VerbsResources.snapshot(), "every resource of the test was closed");
        }
    }

    private void connect() {
        connect(x -> { }, x -> { });
    }

    private void connect(Consumer<ConnectionAttributes> ta, Consumer<ConnectionAttributes> tb) {
        QpEndpoint ea = a.endpoint();
        QpEndpoint eb = b.endpoint();
        ConnectionAttributes ca = a.attributes(eb);
        ConnectionAttributes cb = b.attributes(ea);
        ta.accept(ca);
        tb.accept(cb);
        a.qp.connect(ca);
        b.qp.connect(cb);
        assertEquals(QpState.RTS, a.qp.state());
        assertEquals(QpState.RTS, b.qp.state());
    }

    private static void fill(MemorySegment s, long offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            s.set(JAVA_BYTE, offset + i, (byte) (seed + i * 7));
        }
    }

    private static void assertFilled(MemorySegment s, long offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            assertEquals((byte) (seed + i * 7), s.get(JAVA_BYTE, offset + i), "byte " + i);
        }
    }

    @Test
    void devicesPortsAndGids() {
        List<DeviceInfo> devices = Verbs.devices();
        assertTrue(devices.stream().anyMatch(d -> d.name().equals(RdmaDevices.DEV0)), devices.toString());
        assertEquals(RdmaDevices.DEV0, a.ctx.name());
        DeviceAttributes dev = a.ctx.queryDevice();
        assertEquals(1, dev.physicalPortCount());
        assertTrue(dev.maxQp() > 0 && dev.maxCqe() > 0 && dev.maxMrSize() != 0, dev.toString()); // max_mr_size is a u64
        PortAttributes port = a.ctx.queryPort(1);
        assertEquals(PortState.ACTIVE, port.state());
        assertEquals(LinkLayer.ETHERNET, port.linkLayer());
        assertTrue(port.gidTableLength() > 0);
        assertTrue(port.activeMtu().bytes() >= 256 && port.activeMtu().bytes() <= port.maxMtu().bytes(), port.toString());
        List<GidEntry> gids = a.ctx.gidTable(1);
        GidEntry v2 = a.ctx.gidFor(1, RdmaDevices.address(RdmaDevices.ADDR0));
        assertEquals(GidType.ROCE_V2, v2.type());
        assertEquals(Gid.of(RdmaDevices.address(RdmaDevices.ADDR0)), v2.gid());
        assertEquals("veth0", v2.netdev());
        assertTrue(gids.contains(v2), gids.toString());
        assertEquals(v2, a.ctx.gid(1, v2.index()));
        // rxe0 sits on veth0: every entry of its table is typed and belongs to that netdev (kernel 6.1's rxe
        // lists RoCE v2 entries only, older ones v1 too, so the types present are not asserted).
        assertTrue(gids.stream().allMatch(g -> g.type() != null && "veth0".equals(g.netdev()) && g.port() == 1),
                gids.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> a.ctx.gidFor(1, RdmaDevices.address(RdmaDevices.ADDR1)));
        assertTrue(e.getMessage().startsWith("no RoCE v2 GID for " + RdmaDevices.ADDR1 + " on " + RdmaDevices.DEV0),
                e.getMessage());
        System.out.println(a.ctx.name() + " " + port + "\n  GIDs " + gids);
        try (Context first = Context.openFirstActive()) {
            assertTrue(first.queryPort(1).isActive());
        }
    }

    @Test
    void sendAndReceive() {
        connect();
        b.recvs.get(0).wrId(500).buffer(b.mr, 1024, 4096);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        fill(a.buffer, 0, 100, 3);
        a.sends.get(0).clear().wrId(7).send(a.mr, 0, 100).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.SEND, 7);
        b.awaitOne();
        b.expect(WcOpcode.RECV, 500);
        assertEquals(100, b.wc.byteLength(0));
        assertEquals(b.qp.qpNum(), b.wc.qpNum(0));
        assertTrue(!b.wc.hasImmData(0));
        assertFilled(b.buffer, 1024, 100, 3);
    }

    @Test
    void sendWithImmediate() {
        connect();
        b.recvs.get(0).wrId(1).buffer(b.mr, 0, 256);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        a.sends.get(0).clear().wrId(2).sendWithImm(a.mr, 0, 16, 0xDEADBEEF).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.SEND, 2);
        b.awaitOne();
        b.expect(WcOpcode.RECV, 1);
        assertTrue(b.wc.hasImmData(0));
        assertEquals(0xDEADBEEF, b.wc.immData(0));
    }

    @Test
    void rdmaWrite() {
        connect();
        fill(a.buffer, 4096, 3000, 11);
        a.sends.get(0).clear().wrId(3).write(a.mr, 4096, 3000, b.mr.address() + 8192, b.mr.rkey()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.RDMA_WRITE, 3);
        assertFilled(b.buffer, 8192, 3000, 11);
        assertEquals(0, b.cq.poll(b.wc), "a plain write is silent on the target");
    }

    @Test
    void rdmaWriteWithImmediateConsumesAReceive() {
        connect();
        b.recvs.get(0).wrId(77).sgeCount(0);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        fill(a.buffer, 0, 512, 5);
        a.sends.get(0).clear().wrId(4).writeWithImm(a.mr, 0, 512, b.mr.address() + 100, b.mr.rkey(), 42)
                .signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.RDMA_WRITE, 4);
        b.awaitOne();
        b.expect(WcOpcode.RECV_RDMA_WITH_IMM, 77);
        assertEquals(42, b.wc.immData(0));
        assertEquals(512, b.wc.byteLength(0));
        assertFilled(b.buffer, 100, 512, 5);
    }

    @Test
    void rdmaRead() {
        connect();
        fill(b.buffer, 20_000, 5000, 17);
        a.sends.get(0).clear().wrId(5).read(a.mr, 30_000, 5000, b.mr.address() + 20_000, b.mr.rkey()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.RDMA_READ, 5);
        assertFilled(a.buffer, 30_000, 5000, 17);
    }

    @Test
    void memoryRegisteredByAddressIsAnRdmaTargetWithoutASegment() {
        connect();
        MemorySegment target = b.arena.allocate(8192, 4096);
        try (MemoryRegion byAddress = b.pd.registerAddress(target.address(), target.byteSize(),
                Access.LOCAL_REMOTE_READ_WRITE)) {
            assertEquals(MemorySegment.NULL, byAddress.memory(), "memory the layer was given no segment of");
            assertEquals(target.address(), byAddress.address());
            assertEquals(8192, byAddress.length());
            assertThrows(IndexOutOfBoundsException.class, () -> byAddress.address(8000, 500));
            assertThrows(IllegalStateException.class, () -> b.pd.close(), "the region keeps its domain open");
            fill(a.buffer, 0, 700, 29);
            a.sends.get(0).clear().wrId(6).write(a.mr, 0, 700, byAddress.address(1000, 700), byAddress.rkey())
                    .signaled(true);
            assertEquals(0, a.qp.postSend(a.sends, 1));
            a.awaitOne();
            a.expect(WcOpcode.RDMA_WRITE, 6);
            assertFilled(target, 1000, 700, 29);
        }
        assertThrows(IllegalArgumentException.class, () -> b.pd.registerAddress(0, 64, Access.LOCAL));
        assertThrows(IllegalArgumentException.class, () -> b.pd.registerAddress(target.address(), 0, Access.LOCAL));
    }

    @Test
    void aDmaBufRegistrationSoftRoceRefusesCarriesErrnoAndLeavesNothingCounted() {
        long regions = VerbsResources.live(ResourceKind.MEMORY_REGION);
        int dependents = a.pd.dependents();
        int notADmaBuf = Posix.eventfd();
        try {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> a.pd.registerDmaBuf(0, 4096, 0x10000, notADmaBuf, Access.LOCAL));
            assertEquals("ibv_reg_dmabuf_mr", e.operation(), e.getMessage());
            assertTrue(e.errno() > 0 && e.getMessage().startsWith("ibv_reg_dmabuf_mr failed: "), e.getMessage());
            System.out.println("ibv_reg_dmabuf_mr on " + a.ctx.name() + " with an eventfd: " + e.getMessage());
        } finally {
            Posix.close(notADmaBuf);
        }
        assertEquals(regions, VerbsResources.live(ResourceKind.MEMORY_REGION));
        assertEquals(dependents, a.pd.dependents(), "a refused registration is no dependent of the domain");
        assertThrows(IllegalArgumentException.class, () -> a.pd.registerDmaBuf(0, 4096, 0, -1, Access.LOCAL));
        assertThrows(IllegalArgumentException.class, () -> a.pd.registerDmaBuf(0, 4096, 0, 3, 1 << 30));
    }

    @Test
    void inlineSendFromUnregisteredMemory() {
        connect();
        assertTrue(a.qp.capabilities().maxInlineData() >= 64, a.qp.capabilities().toString());
        MemorySegment unregistered = a.arena.allocate(48);
        fill(unregistered, 0, 48, 23);
        b.recvs.get(0).wrId(9).buffer(b.mr, 0, 128);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        a.sends.get(0).clear().wrId(8).opcode(SendOpcode.SEND).inlineSge(0, unregistered).sgeCount(1)
                .inline(true).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        fill(unregistered, 0, 48, 99); // inline: copied at post time, so this change is not sent
        a.awaitOne();
        a.expect(WcOpcode.SEND, 8);
        b.awaitOne();
        b.expect(WcOpcode.RECV, 9);
        assertEquals(48, b.wc.byteLength(0));
        assertFilled(b.buffer, 0, 48, 23);
    }

    @Test
    void gatherFromSeveralSgesAndScatterIntoTwo() {
        connect();
        fill(a.buffer, 0, 10, 1);
        fill(a.buffer, 1000, 20, 11);
        fill(a.buffer, 2000, 30, 31);
        b.recvs.get(0).wrId(1).sge(0, b.mr, 500, 25).sge(1, b.mr, 600, 100).sgeCount(2);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        a.sends.get(0).clear().wrId(2).opcode(SendOpcode.SEND).sge(0, a.mr, 0, 10).sge(1, a.mr, 1000, 20)
                .sge(2, a.mr, 2000, 30).sgeCount(3).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.SEND, 2);
        b.awaitOne();
        b.expect(WcOpcode.RECV, 1);
        assertEquals(60, b.wc.byteLength(0));
        byte[] expected = new byte[60];
        MemorySegment.copy(a.buffer, JAVA_BYTE, 0, expected, 0, 10);
        MemorySegment.copy(a.buffer, JAVA_BYTE, 1000, expected, 10, 20);
        MemorySegment.copy(a.buffer, JAVA_BYTE, 2000, expected, 30, 30);
        for (int i = 0; i < 60; i++) {
            long at = i < 25 ? 500 + i : 600 + i - 25;
            assertEquals(expected[i], b.buffer.get(JAVA_BYTE, at), "byte " + i);
        }
    }

    @Test
    void aChainOfWorkRequestsInOnePostCompletesInOrder() {
        connect();
        fill(a.buffer, 0, 64, 2);
        b.recvs.get(0).wrId(100).buffer(b.mr, 0, 64);
        assertEquals(0, b.qp.postReceive(b.recvs, 1));
        a.sends.get(3).clear().wrId(31).write(a.mr, 0, 64, b.mr.address() + 4096, b.mr.rkey()); // unsignaled
        a.sends.get(4).clear().wrId(32).read(a.mr, 8192, 64, b.mr.address() + 4096, b.mr.rkey()).signaled(true);
        a.sends.get(5).clear().wrId(33).send(a.mr, 0, 64).signaled(true).solicited(true);
        assertEquals(0, a.qp.postSend(a.sends, 3, 3));
        List<String> done = a.await(2);
        assertTrue(done.get(0).startsWith("wr 32 RDMA_READ SUCCESS"), done.toString());
        assertTrue(done.get(1).startsWith("wr 33 SEND SUCCESS"), done.toString());
        assertFilled(b.buffer, 4096, 64, 2);
        assertFilled(a.buffer, 8192, 64, 2);
        b.awaitOne();
        b.expect(WcOpcode.RECV, 100);
    }

    @Test
    void sendWithoutAReceiveRunsOutOfRnrRetries() {
        // a retries once after an RNR NAK; b asks for the shortest RNR delay (code 1 = 0.01 ms).
        connect(ca -> ca.rnrRetry(1), cb -> cb.minRnrTimer(1));
        a.sends.get(0).clear().wrId(66).send(a.mr, 0, 32).signaled(true);
        long start = System.nanoTime();
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, a.wc.status(0), a.wc.describe(0));
        assertEquals(66, a.wc.wrId(0));
        assertEquals("RNR retry counter exceeded", a.wc.status(0).text());
        System.out.println("RNR_RETRY_EXC_ERR after " + millis + " ms");
        assertEquals(QpState.ERR, a.qp.state(), "an error completion moves the QP to ERR");
    }

    @Test
    void aWrongRkeyIsARemoteAccessError() {
        connect();
        a.sends.get(0).clear().wrId(13).write(a.mr, 0, 64, b.mr.address() + 0, b.mr.rkey() ^ 0x5A5A00).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        assertEquals(WcStatus.REM_ACCESS_ERR, a.wc.status(0), a.wc.describe(0));
        assertEquals(13, a.wc.wrId(0));
        assertEquals("remote access error", a.wc.status(0).text());
    }

    @Test
    void movingToErrFlushesPostedReceives() {
        connect();
        for (int i = 0; i < 4; i++) {
            b.recvs.get(i).wrId(200 + i).buffer(b.mr, i * 1024L, 1024);
        }
        assertEquals(0, b.qp.postReceive(b.recvs, 0, 4));
        b.qp.toError();
        assertEquals(QpState.ERR, b.qp.state());
        List<String> flushed = b.await(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(flushed.get(i).startsWith("wr " + (200 + i) + " WR_FLUSH_ERR (Work Request Flushed Error)"),
                    flushed.toString());
        }
        b.qp.toReset();
        assertEquals(QpState.RESET, b.qp.state());
    }

    @Test
    void completionChannelEventsAndReArming() {
        connect();
        for (int i = 0; i < 3; i++) {
            a.recvs.get(i).wrId(i).buffer(a.mr, i * 256L, 256);
        }
        assertEquals(0, a.qp.postReceive(a.recvs, 0, 3));
        a.cq.requestNotify(false);
        assertNull(a.channel.awaitEvent(0), "no completion yet, no event");

        b.sends.get(0).clear().wrId(1).send(b.mr, 0, 8).signaled(true);
        assertEquals(0, b.qp.postSend(b.sends, 1));
        assertSame(a.cq, a.channel.awaitEvent(10_000), "the armed CQ raised an event");
        assertEquals(1, a.cq.unacknowledgedEvents());
        assertEquals(1, a.cq.poll(a.wc));
        a.expect(WcOpcode.RECV, 0);
        assertNull(a.channel.awaitEvent(50), "disarmed by the event: no second event without re-arming");

        // awaitCompletions: arm, re-poll, wait, poll
        Thread sender = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            b.sends.get(1).clear().wrId(2).send(b.mr, 0, 8).signaled(true);
            b.qp.postSend(b.sends, 1, 1);
        });
        assertEquals(1, a.cq.awaitCompletions(a.wc, 4, 10_000));
        a.expect(WcOpcode.RECV, 1);
        assertEquals(0, a.cq.awaitCompletions(a.wc, 4, 100), "times out when nothing comes");
        try {
            sender.join(10_000);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        b.await(2);
        assertTrue(a.cq.unacknowledgedEvents() >= 2, "events are acknowledged in batches");
        a.cq.acknowledgeEvents();
        assertEquals(0, a.cq.unacknowledgedEvents());
    }

    @Test
    void solicitedOnlyNotificationIgnoresUnsolicitedSends() {
        connect();
        for (int i = 0; i < 2; i++) {
            a.recvs.get(i).wrId(i).buffer(a.mr, i * 256L, 256);
        }
        assertEquals(0, a.qp.postReceive(a.recvs, 0, 2));
        a.cq.requestNotify(true);
        b.sends.get(0).clear().wrId(1).send(b.mr, 0, 8).signaled(true);
        assertEquals(0, b.qp.postSend(b.sends, 1));
        b.awaitOne();
        assertNull(a.channel.awaitEvent(300), "an unsolicited receive raises no solicited-only event");
        b.sends.get(0).clear().wrId(2).send(b.mr, 0, 8).signaled(true).solicited(true);
        assertEquals(0, b.qp.postSend(b.sends, 1));
        assertSame(a.cq, a.channel.awaitEvent(10_000));
        assertEquals(2, a.cq.poll(a.wc));
    }

    @Test
    void sharedReceiveQueueAndItsLimitEvent() throws Exception {
        BlockingQueue<AsyncEvent> events = new ArrayBlockingQueue<>(16);
        try (AsyncEventMonitor monitor = b.ctx.startAsyncEvents(events::add);
             SharedReceiveQueue srq = b.pd.createSharedReceiveQueue(16, 1, 0);
             QueuePair bq = b.pd.createQueuePair(new QueuePairInit().completionQueue(b.cq).sharedReceiveQueue(srq))) {
            assertThrows(IllegalStateException.class, () -> b.pd.close(), "the PD has dependents");
            assertThrows(IllegalStateException.class, srq::close, "the QP uses the SRQ");
            QpEndpoint ea = a.endpoint();
            QpEndpoint eb = bq.endpoint(1, b.gidIndex, 0x3003);
            a.qp.connect(a.attributes(eb));
            bq.connect(new ConnectionAttributes().remote(ea).localPsn(0x3003).sgidIndex(b.gidIndex));
            for (int i = 0; i < 8; i++) {
                b.recvs.get(i).wrId(300 + i).buffer(b.mr, i * 512L, 512);
            }
            assertEquals(0, srq.postReceive(b.recvs, 0, 8));
            srq.armLimit(6);
            assertThrows(IllegalStateException.class, () -> bq.postReceive(b.recvs, 0, 1));
            for (int i = 0; i < 3; i++) {
                a.sends.get(i).clear().wrId(i).send(a.mr, 0, 32).signaled(true);
            }
            assertEquals(0, a.qp.postSend(a.sends, 0, 3));
            a.await(3);
            List<String> got = b.await(3);
            assertTrue(got.get(0).startsWith("wr 300 RECV SUCCESS"), got.toString());
            AsyncEvent e = events.poll(10, TimeUnit.SECONDS);
            assertNotNull(e, "no SRQ_LIMIT_REACHED event within 10 s");
            assertEquals(AsyncEventType.SRQ_LIMIT_REACHED, e.type());
            assertSame(srq, e.sharedReceiveQueue());
            assertSame(b.ctx, e.context());
            assertTrue(monitor.isRunning());
            bq.toError(); // the 5 receives left stay in the SRQ (they belong to no QP) and go with it
        }
    }

    @Test
    void resourcesRefuseToCloseBeforeTheirDependentsAndClosedQueuePairsRefusePosts() {
        assertThrows(IllegalStateException.class, () -> a.pd.close());
        assertThrows(IllegalStateException.class, () -> a.ctx.close());
        assertThrows(IllegalStateException.class, () -> a.cq.close(), "the QP uses the CQ");
        assertThrows(IllegalStateException.class, () -> a.channel.close(), "the CQ uses the channel");
        try (QueuePair extra = a.pd.createQueuePair(new QueuePairInit().completionQueue(a.cq))) {
            assertEquals(QpState.RESET, extra.state());
            extra.close();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> extra.postSend(a.sends, 1));
            assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> extra.postReceive(a.recvs, 1));
            assertThrows(IllegalStateException.class, extra::state);
        }
        MemorySegment heap = MemorySegment.ofArray(new byte[64]);
        assertThrows(IllegalArgumentException.class, () -> a.pd.register(heap, Access.LOCAL));
    }

    @Test
    void postingAndPollingAllocateNothingWithARealDevice() {
        connect();
        int iterations = 2_000;
        long best = Long.MAX_VALUE;
        long sink = 0;
        for (int round = 0; round < 15 && best >= 256; round++) {
            long start = DataPathAllocationTest.allocatedBytes();
            for (int i = 0; i < iterations; i++) {
                b.recvs.get(0).wrId(i).buffer(b.mr, 0, 64);
                if (b.qp.postReceive(b.recvs, 0, 1) != 0) {
                    throw new AssertionError("postReceive failed");
                }
                a.sends.get(0).clear().wrId(i).send(a.mr, 0, 64).signaled(true);
                if (a.qp.postSend(a.sends, 0, 1) != 0) {
                    throw new AssertionError("postSend failed");
                }
                int got = 0;
                while (got < 2) {
                    int n = a.cq.poll(a.wc, 4);
                    for (int k = 0; k < n; k++) {
                        if (!a.wc.isSuccess(k)) {
                            throw new AssertionError(a.wc.describe(k));
                        }
                        sink += a.wc.wrId(k);
                    }
                    got += n;
                    n = b.cq.poll(b.wc, 4);
                    for (int k = 0; k < n; k++) {
                        if (!b.wc.isSuccess(k)) {
                            throw new AssertionError(b.wc.describe(k));
                        }
                        sink += b.wc.byteLength(k);
                    }
                    got += n;
                }
            }
            best = Math.min(best, DataPathAllocationTest.allocatedBytes() - start);
        }
        System.out.println("real device: " + best + " bytes allocated for " + iterations
                + " post-receive + post-send + poll round trips (best round)");
        assertTrue(sink > 0);
        assertTrue(best < 1024, best + " bytes allocated by " + iterations + " round trips");
    }

    @Test
    void thousandsOfResourcesComeAndGoWithoutLeaking() {
        Map<ResourceKind, Long> start = VerbsResources.snapshot();
        long created = VerbsResources.created(ResourceKind.QUEUE_PAIR);
        int rounds = 500;
        for (int i = 0; i < rounds; i++) {
            try (ProtectionDomain pd = a.ctx.allocateProtectionDomain();
                 MemoryRegion mr = pd.register(a.buffer.asSlice(0, 4096), Access.LOCAL);
                 CompletionQueue cq = a.ctx.createCompletionQueue(16);
                 QueuePair qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq).maxSendWr(4).maxRecvWr(4))) {
                if (i % 100 == 0) {
                    Map<ResourceKind, Long> live = VerbsResources.snapshot();
                    assertEquals(start.get(ResourceKind.QUEUE_PAIR) + 1, live.get(ResourceKind.QUEUE_PAIR));
                    assertEquals(start.get(ResourceKind.MEMORY_REGION) + 1, live.get(ResourceKind.MEMORY_REGION));
                }
                assertTrue(qp.qpNum() > 0 && mr.lkey() != 0);
            }
        }
        assertEquals(start, VerbsResources.snapshot());
        assertEquals(created + rounds, VerbsResources.created(ResourceKind.QUEUE_PAIR));
        System.out.println("created and closed " + 4 * rounds + " PD/MR/CQ/QP; live now " + VerbsResources.snapshot());
        EnumMap<ResourceKind, Long> zero = new EnumMap<>(ResourceKind.class);
        assertTrue(zero.isEmpty());
    }
}
