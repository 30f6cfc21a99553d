package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.ibverbs.VerbsException;
import dev.rdmarpc.ibverbs.raw.ibv_device_attr;
import dev.rdmarpc.ibverbs.raw.ibverbs_h;
import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Type-2 memory windows between the two Soft-RoCE devices of the test VM, with RC queue pairs connected
 * as {@link VerbsRdmaTest} connects them. Side A registers a buffer for binding only
 * ({@code LOCAL_WRITE | MW_BIND}, no remote access: the region's own key reaches nothing), binds a window
 * to {@code [OFF, OFF + LEN)} of it with {@code REMOTE_READ} (a signaled BIND_MW on A's queue pair,
 * waited for), and hands side B the address and the new key; B reads with RDMA READ. The last tests
 * (h) do the same with a region registered on the range alone, which rdmarpc's rendezvous uses instead
 * of a window on Soft-RoCE.
 *
 * <p>A remote access error moves both queue pairs to the error state (B's on the error completion, A's
 * as the responder of a class C error), so every refusal is the last operation of its test method, and
 * every method starts from fresh sides, queue pairs and window. A refusal is asserted as what it is: the
 * exact status of B's completion, nothing of A's bytes in B's landing area, B's queue pair in ERR.
 *
 * <h2>The device</h2>
 * {@code ibv_devinfo -v} in the VM (kernel 6.12.95, rdma_rxe) lists MEM_WINDOW and MEM_WINDOW_TYPE_2B
 * among the device_cap_flags and max_mw 524287 ({@link #theDeviceHasType2BWindows()} checks the flags
 * and prints max_mw: {@code rxe0: device_cap_flags 0x1223c76, max_mw 524287}).
 *
 * <h2>Where Soft-RoCE differs from the spec</h2>
 * Each of these tests asserts what the spec requires on other devices and, on rxe (vendor id 0xffffff),
 * exactly what rxe does, so that a change in either direction fails:
 * <ul>
 * <li>A window's key is checked against the range of the <em>region</em> the window is bound to, not
 *     against the window's own range (rxe_resp.c {@code check_rkey} looks the window up, takes its region
 *     and calls {@code mr_check_range(mr, ...)}). A READ one byte before or past the window, inside the
 *     region, succeeds and returns A's byte; the spec confines a window's key to the window. On rxe a
 *     window narrows nothing within its region.</li>
 * <li>The receive completion of a SEND_WITH_INV carries the key in {@code invalidated_rkey}, but its
 *     {@code wc_flags} are 0x5: the kernel's {@code IB_WC_WITH_INVALIDATE} (1 &lt;&lt; 2) copied into
 *     the user CQE untranslated, which libibverbs reads as {@code IBV_WC_IP_CSUM_OK}, plus GRH;
 *     {@code IBV_WC_WITH_INV} (1 &lt;&lt; 3) is not set, so {@link WorkCompletions#hasInvalidate} is false.
 *     The key is revoked all the same.</li>
 * <li>A bind that fails (a type-2 window bound again before it was invalidated) completes with
 *     {@code WR_FLUSH_ERR}, not {@code MW_BIND_ERR}: rxe's requester moves the queue pair to ERR first
 *     and its completer, in the same task, then flushes the failed request with the rest.</li>
 * </ul>
 */
@RdmaTest
class MemoryWindowRdmaTest {
    private static final int EXPOSED = 16 * 1024;
    /** The first binding's range: inside the region, away from both of its ends. */
    private static final long OFF = 4096 + 100;
    private static final int LEN = 3000;
    /** The second binding's range (rebinding), apart from the first. */
    private static final long OFF2 = 10_000;
    private static final int LEN2 = 2000;

    private Map<ResourceKind, Long> before;
    private RdmaSide a;
    private RdmaSide b;
    private MemorySegment exposed;
    private MemoryRegion bindable;
    private MemoryWindow mw;

    /** What A hands B: the window's first byte and the key of the binding. */
    private record Grant(long address, int rkey) {
    }

    /** Soft-RoCE, by rxe's vendor id ({@code RXE_VENDOR_ID}): where it differs from the spec, see above. */
    private boolean softRoce() {
        return a.ctx.queryDevice().vendorId() == 0xFFFFFF;
    }

    @BeforeEach
    void sides() {
        before = VerbsResources.snapshot();
        a = new RdmaSide(RdmaDevices.DEV0, RdmaDevices.ADDR0, 0x1001, init -> { });
        b = new RdmaSide(RdmaDevices.DEV1, RdmaDevices.ADDR1, 0x2002, init -> { });
        exposed = a.arena.allocate(EXPOSED, 4096);
        for (int i = 0; i < EXPOSED; i++) {
            exposed.set(JAVA_BYTE, i, (byte) (41 + i * 7));
        }
        bindable = a.pd.register(exposed, Access.LOCAL_WRITE.bit() | Access.MW_BIND.bit());
        mw = a.pd.allocateMemoryWindow();
        QpEndpoint ea = a.endpoint();
        QpEndpoint eb = b.endpoint();
        a.qp.connect(a.attributes(eb));
        b.qp.connect(b.attributes(ea));
        assertEquals(QpState.RTS, a.qp.state());
        assertEquals(QpState.RTS, b.qp.state());
    }

    @AfterEach
    void close() {
        if (mw != null) {
            mw.close(); // before the region: rxe refuses to deregister a region with a window bound to it
        }
        if (bindable != null) {
            bindable.close();
        }
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

    /** Binds {@link #mw} on A's queue pair to {@code [offset, offset + length)} with REMOTE_READ and waits. */
    private Grant bind(long offset, int length, long wrId) {
        int key = MemoryWindow.nextRkey(mw.rkey());
        long address = bindable.address(offset, length);
        a.sends.get(0).clear().wrId(wrId).bindMemoryWindow(mw, key, bindable, address, length,
                Access.REMOTE_READ.bit()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.BIND_MW, wrId);
        mw.bound(key);
        assertEquals(key, mw.rkey());
        return new Grant(address, key);
    }

    /** A's LOCAL_INV of {@code rkey}, waited for. */
    private void invalidateLocally(int rkey, long wrId) {
        a.sends.get(0).clear().wrId(wrId).localInvalidate(rkey).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        a.expect(WcOpcode.LOCAL_INV, wrId);
    }

    /**
     * B reads {@code length} bytes at {@code sourceOffset} of A's region under {@code rkey} into its buffer
     * at {@code landing}, after filling the landing area with the complement of those bytes (0x5A past the
     * region's end); returns the status of B's completion (its other fields stay readable at index 0 of
     * {@code b.wc}).
     */
    private WcStatus read(long landing, long sourceOffset, int length, int rkey, long wrId) {
        for (int i = 0; i < length; i++) {
            long at = sourceOffset + i;
            b.buffer.set(JAVA_BYTE, landing + i, at < EXPOSED ? (byte) ~exposed.get(JAVA_BYTE, at) : (byte) 0x5A);
        }
        b.sends.get(0).clear().wrId(wrId).read(b.mr, landing, length, bindable.address() + sourceOffset, rkey)
                .signaled(true);
        assertEquals(0, b.qp.postSend(b.sends, 1));
        b.awaitOne();
        assertEquals(wrId, b.wc.wrId(0), b.wc.describe(0));
        return b.wc.status(0);
    }

    private void assertRead(WcStatus status, long landing, long sourceOffset, int length) {
        assertEquals(WcStatus.SUCCESS, status, b.wc.describe(0));
        assertEquals(WcOpcode.RDMA_READ, b.wc.opcode(0), b.wc.describe(0));
        for (int i = 0; i < length; i++) {
            assertEquals(exposed.get(JAVA_BYTE, sourceOffset + i), b.buffer.get(JAVA_BYTE, landing + i), "byte " + i);
        }
    }

    /** A real refusal: the exact status, none of A's bytes in B's landing area, B's queue pair in ERR. */
    private void assertRefused(WcStatus status, long landing, long sourceOffset, int length) {
        assertEquals(WcStatus.REM_ACCESS_ERR, status, b.wc.describe(0));
        assertEquals("remote access error", status.text());
        for (int i = 0; i < length; i++) {
            assertEquals((byte) ~exposed.get(JAVA_BYTE, sourceOffset + i), b.buffer.get(JAVA_BYTE, landing + i),
                    "byte " + i + " of the landing area is untouched");
        }
        assertEquals(QpState.ERR, b.qp.state(), "the error completion moved B's queue pair to ERR");
    }

    @Test
    void theDeviceHasType2BWindows() {
        DeviceAttributes dev = a.ctx.queryDevice();
        assertTrue((dev.deviceCapFlags() & ibverbs_h.IBV_DEVICE_MEM_WINDOW()) != 0, dev.toString());
        assertTrue((dev.deviceCapFlags() & ibverbs_h.IBV_DEVICE_MEM_WINDOW_TYPE_2B()) != 0, dev.toString());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_device_attr.allocate(arena);
            assertEquals(0, ibverbs_h.ibv_query_device(a.ctx.segment(), attr));
            int maxMw = ibv_device_attr.max_mw(attr);
            assertTrue(maxMw > 0, "max_mw " + maxMw);
            System.out.println(a.ctx.name() + ": device_cap_flags 0x" + Integer.toHexString(dev.deviceCapFlags())
                    + ", max_mw " + maxMw);
        }
        System.out.println("window " + mw + " allocated with rkey 0x" + Integer.toHexString(mw.rkey())
                + "; region " + bindable);
        if (RdmaDevices.ENV.inVm()) {
            assertTrue(softRoce(), "the VM's devices are rxe, vendor id 0xffffff: " + dev);
        }
    }

    /** a. The whole bound range, through the window's key: A's bytes. */
    @Test
    void theBoundRangeReadsThroughTheWindowsKey() {
        Grant grant = bind(OFF, LEN, 1);
        assertNotEquals(bindable.rkey(), grant.rkey());
        assertEquals(bindable.address() + OFF, grant.address());
        b.buffer.set(JAVA_BYTE, 99, (byte) 0x33);
        b.buffer.set(JAVA_BYTE, 100 + LEN, (byte) 0x44);
        assertRead(read(100, OFF, LEN, grant.rkey(), 2), 100, OFF, LEN);
        assertEquals(0x33, b.buffer.get(JAVA_BYTE, 99), "nothing before the landing area");
        assertEquals(0x44, b.buffer.get(JAVA_BYTE, 100 + LEN), "nothing after it");
    }

    /**
     * A read outside the window but inside its region: a remote access error by the spec; rxe checks
     * only the region's bounds, and the read returns A's byte (see the class comment).
     */
    private void assertOutsideTheWindow(WcStatus status, long sourceOffset) {
        if (softRoce()) {
            assertRead(status, 0, sourceOffset, 1);
            assertEquals(QpState.RTS, b.qp.state(), "rxe let the read through");
        } else {
            assertRefused(status, 0, sourceOffset, 1);
        }
    }

    /** b. One byte before the window, inside the region. */
    @Test
    void oneByteBeforeTheWindowIsOutsideIt() {
        Grant grant = bind(OFF, LEN, 1);
        assertOutsideTheWindow(read(0, OFF - 1, 1, grant.rkey(), 2), OFF - 1);
    }

    /** b. The first byte past the window's end, inside the region. */
    @Test
    void oneBytePastTheWindowIsOutsideIt() {
        Grant grant = bind(OFF, LEN, 1);
        assertOutsideTheWindow(read(0, OFF + LEN, 1, grant.rkey(), 2), OFF + LEN);
    }

    /** b. A read that starts inside the window and runs one byte past it: the same on rxe. */
    @Test
    void aReadRunningOneBytePastTheWindowIsOutsideIt() {
        Grant grant = bind(OFF, LEN, 1);
        WcStatus status = read(0, OFF, LEN + 1, grant.rkey(), 2);
        if (softRoce()) {
            assertRead(status, 0, OFF, LEN + 1);
        } else {
            assertRefused(status, 0, OFF, LEN + 1);
        }
    }

    /** b. Past the end of the region itself, rxe refuses the window's key too: its bound is the region's. */
    @Test
    void aReadPastTheRegionThroughTheWindowIsRefused() {
        Grant grant = bind(EXPOSED - LEN, LEN, 1);
        assertRefused(read(0, EXPOSED - LEN, LEN + 1, grant.rkey(), 2), 0, EXPOSED - LEN, LEN);
    }

    /** c. The region's own key, never handed out: the region has no remote access, a window bound or not. */
    @Test
    void theRegionsOwnKeyReachesNothing() {
        bind(OFF, LEN, 1);
        assertRefused(read(0, OFF, LEN, bindable.rkey(), 2), 0, OFF, LEN);
    }

    /** d. LOCAL_INV on A's queue pair revokes the key. */
    @Test
    void aLocallyInvalidatedKeyReachesNothing() {
        Grant grant = bind(OFF, LEN, 1);
        assertRead(read(0, OFF, 64, grant.rkey(), 2), 0, OFF, 64);
        invalidateLocally(grant.rkey(), 3);
        assertRefused(read(0, OFF, 64, grant.rkey(), 4), 0, OFF, 64);
    }

    /** e. B's SEND_WITH_INV revokes the key at A, and A's receive completion names it. */
    @Test
    void sendWithInvalidateRevokesTheKeyAndTheReceiveReportsIt() {
        Grant grant = bind(OFF, LEN, 1);
        assertRead(read(0, OFF, 64, grant.rkey(), 2), 0, OFF, 64);
        a.recvs.get(0).wrId(77).buffer(a.mr, 0, 256);
        assertEquals(0, a.qp.postReceive(a.recvs, 1));
        b.sends.get(0).clear().wrId(3).sendWithInvalidate(b.mr, 0, 64, grant.rkey()).signaled(true);
        assertEquals(0, b.qp.postSend(b.sends, 1));
        b.awaitOne();
        b.expect(WcOpcode.SEND, 3);
        a.awaitOne();
        a.expect(WcOpcode.RECV, 77);
        assertEquals(64, a.wc.byteLength(0));
        String flags = a.wc.describe(0) + ", wc_flags 0x" + Integer.toHexString(a.wc.wcFlags(0));
        if (softRoce()) { // the kernel's IB_WC_WITH_INVALIDATE, 1 << 2, untranslated (see the class comment)
            assertEquals(WorkCompletions.GRH | 1 << 2, a.wc.wcFlags(0), flags);
            assertFalse(a.wc.hasInvalidate(0), flags);
        } else {
            assertTrue(a.wc.hasInvalidate(0), flags);
        }
        assertEquals(grant.rkey(), a.wc.invalidatedRkey(0), flags);
        assertRefused(read(0, OFF, 64, grant.rkey(), 4), 0, OFF, 64);
    }

    /**
     * f. Rebinding: the window, invalidated, is bound to another range with the next key; the new key
     * reads the new range, the old key reaches nothing. (Only a free type-2 window may be bound:
     * {@link #aBoundWindowCannotBeBoundAgainBeforeItIsInvalidated()}.)
     */
    @Test
    void rebindingWithTheNextKeyMovesTheWindowAndRetiresTheOldKey() {
        Grant first = bind(OFF, LEN, 1);
        assertRead(read(0, OFF, LEN, first.rkey(), 2), 0, OFF, LEN);
        invalidateLocally(first.rkey(), 3);
        Grant second = bind(OFF2, LEN2, 4);
        assertEquals(MemoryWindow.nextRkey(first.rkey()), second.rkey());
        assertEquals(first.rkey() & 0xffffff00, second.rkey() & 0xffffff00, "the window's index stays");
        assertNotEquals(first.rkey() & 0xff, second.rkey() & 0xff, "the tag moved on");
        assertRead(read(0, OFF2, LEN2, second.rkey(), 5), 0, OFF2, LEN2);
        assertRefused(read(0, OFF, LEN, first.rkey(), 6), 0, OFF, LEN);
    }

    /**
     * f. A bound type-2 window is bound again only after it was invalidated (rxe cites IBA o10-37.2.30):
     * the bind fails, by the spec with MW_BIND_ERR, on rxe flushed (see the class comment), and A's queue
     * pair is in ERR either way.
     */
    @Test
    void aBoundWindowCannotBeBoundAgainBeforeItIsInvalidated() {
        Grant first = bind(OFF, LEN, 1);
        int next = MemoryWindow.nextRkey(first.rkey());
        a.sends.get(0).clear().wrId(2).bindMemoryWindow(mw, next, bindable, bindable.address(OFF2, LEN2), LEN2,
                Access.REMOTE_READ.bit()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        assertEquals(softRoce() ? WcStatus.WR_FLUSH_ERR : WcStatus.MW_BIND_ERR, a.wc.status(0), a.wc.describe(0));
        assertEquals(2, a.wc.wrId(0));
        assertEquals(QpState.ERR, a.qp.state(), "the failed bind moved A's queue pair to ERR");
        assertEquals(0, a.cq.poll(a.wc), "one completion, for the bind");
    }

    /** g. Counting, the domain kept open, closing once, checks before posting, a region with a bound window. */
    @Test
    void windowsAreCountedKeepTheirDomainOpenAndCloseOnce() {
        long live = VerbsResources.live(ResourceKind.MEMORY_WINDOW);
        assertEquals(before.get(ResourceKind.MEMORY_WINDOW) + 1, live, "the window of this test");
        assertSame(ResourceKind.MEMORY_WINDOW, mw.kind());
        assertSame(a.pd, mw.protectionDomain());
        try (ProtectionDomain pd = a.ctx.allocateProtectionDomain()) {
            MemoryWindow w = pd.allocateMemoryWindow();
            assertEquals(live + 1, VerbsResources.live(ResourceKind.MEMORY_WINDOW));
            assertEquals(1, pd.dependents());
            assertNotEquals(mw.handle(), w.handle());
            IllegalStateException e = assertThrows(IllegalStateException.class, pd::close);
            assertEquals("cannot close " + pd + ": 1 dependent resource is still open (close them first)",
                    e.getMessage());
            assertTrue(pd.isOpen(), "a refused close leaves the domain open");
            assertThrows(IllegalArgumentException.class, () -> a.sends.get(0).clear()
                    .bindMemoryWindow(w, 1, bindable, bindable.address(OFF, LEN), LEN, Access.REMOTE_READ.bit()),
                    "a window of another domain");
            long destroyed = VerbsResources.destroyed(ResourceKind.MEMORY_WINDOW);
            w.close();
            assertFalse(w.isOpen());
            w.close(); // harmless: not freed or counted twice
            assertEquals(destroyed + 1, VerbsResources.destroyed(ResourceKind.MEMORY_WINDOW));
            assertEquals(live, VerbsResources.live(ResourceKind.MEMORY_WINDOW));
            assertEquals(0, pd.dependents());
            assertTrue(assertThrows(IllegalStateException.class, w::rkey).getMessage().endsWith("is closed"));
            assertThrows(IllegalStateException.class, () -> w.bound(1));
            assertThrows(IllegalStateException.class, () -> a.sends.get(0).clear()
                    .bindMemoryWindow(w, 1, bindable, bindable.address(OFF, LEN), LEN, Access.REMOTE_READ.bit()));
        }
        ProtectionDomain closed = a.ctx.allocateProtectionDomain();
        closed.close();
        assertThrows(IllegalStateException.class, closed::allocateMemoryWindow);
        assertEquals(live, VerbsResources.live(ResourceKind.MEMORY_WINDOW), "a closed domain allocates nothing");

        assertThrows(IndexOutOfBoundsException.class, () -> a.sends.get(0).clear()
                .bindMemoryWindow(mw, 1, bindable, bindable.address() - 1, 2, Access.REMOTE_READ.bit()));
        assertThrows(IndexOutOfBoundsException.class, () -> a.sends.get(0).clear()
                .bindMemoryWindow(mw, 1, bindable, bindable.address() + EXPOSED - 1, 2, Access.REMOTE_READ.bit()));

        // A region with a window bound to it: rxe refuses to deregister it (IBA 10.6.7.2.6), and the region
        // stays open and counted; the window's close (in close()) unbinds it, and then the region closes.
        bind(OFF, LEN, 1);
        long regions = VerbsResources.live(ResourceKind.MEMORY_REGION);
        VerbsException e = assertThrows(VerbsException.class, bindable::close);
        assertEquals("ibv_dereg_mr", e.operation(), e.getMessage());
        assertEquals(22, e.errno(), e.getMessage()); // EINVAL
        assertTrue(bindable.isOpen());
        assertEquals(regions, VerbsResources.live(ResourceKind.MEMORY_REGION));
    }

    /**
     * h. What the transport uses on Soft-RoCE instead of a window (rpc's {@code Rendezvous}): a region
     * registered on the frame's bytes alone, remote read only. It reads exactly its range; the byte
     * before it is refused, on rxe as by the spec (a region's bounds are exact where a window's are not).
     */
    @Test
    void aRegionOfItsOwnReadsItsRangeAndRefusesTheByteBefore() {
        try (MemoryRegion own = a.pd.register(exposed.asSlice(OFF, LEN), Access.REMOTE_READ.bit())) {
            assertEquals(bindable.address() + OFF, own.address());
            assertRead(read(0, OFF, LEN, own.rkey(), 2), 0, OFF, LEN);
            assertRefused(read(0, OFF - 1, 1, own.rkey(), 3), 0, OFF - 1, 1);
        }
    }

    /** h. A read that starts inside a region of its own and runs one byte past it is refused. */
    @Test
    void aReadRunningOneBytePastARegionOfItsOwnIsRefused() {
        try (MemoryRegion own = a.pd.register(exposed.asSlice(OFF, LEN), Access.REMOTE_READ.bit())) {
            assertRefused(read(0, OFF, LEN + 1, own.rkey(), 2), 0, OFF, LEN + 1);
        }
    }

    /** h. Deregistration revokes the key: a read under it afterwards is refused. */
    @Test
    void aDeregisteredRegionsKeyReachesNothing() {
        MemoryRegion own = a.pd.register(exposed.asSlice(OFF, LEN), Access.REMOTE_READ.bit());
        int rkey = own.rkey();
        assertRead(read(0, OFF, 64, rkey, 2), 0, OFF, 64);
        own.close();
        assertRefused(read(0, OFF, 64, rkey, 3), 0, OFF, 64);
    }
}
