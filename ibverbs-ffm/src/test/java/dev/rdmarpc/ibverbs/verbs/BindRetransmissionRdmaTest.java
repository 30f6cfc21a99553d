package dev.rdmarpc.ibverbs.verbs;

import dev.rdmarpc.testsupport.RdmaTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a retransmission does to a memory window bind posted behind the request being retransmitted,
 * between the two Soft-RoCE devices of the test VM.
 *
 * <p>Side B's queue pair is moved to ERR, so it drops every packet A sends: nothing A sends is
 * acknowledged, and A's requester retransmits after each ack timeout (timeout 10, about 4 ms; 3
 * retries). By the spec, A's SEND then fails with {@code RETRY_EXC_ERR} once the retries are spent, and
 * what was posted after it is flushed.
 *
 * <p><b>Soft-RoCE executes the bind again.</b> After a retransmission rxe's requester walks its send
 * queue again from the oldest request not completed ({@code req_retry} sets {@code req.wqe_index} to the
 * queue's consumer index) and {@code req_next_wqe} hands it every request from there, local operations
 * already executed included. A bind executed a second time finds the window's key changed by the first
 * ({@code rxe_bind_mw}: {@code mw->rkey != mw_rkey}, -EINVAL, nothing logged), the requester moves the
 * queue pair to ERR, and every request, the SEND included, completes {@code WR_FLUSH_ERR}: no error
 * completion says why. That is what the RPC transport met under load in the VM (spurious retransmissions
 * under the emulator), and why on rxe it binds a rendezvous frame's windows only when no work request is
 * outstanding (docs/rdma.md, "Rendezvous"). Measured on kernel 6.12.95; the test fails the day rxe
 * stops doing it.
 */
@RdmaTest
class BindRetransmissionRdmaTest {
    private Map<ResourceKind, Long> before;
    private RdmaSide a;
    private RdmaSide b;
    private MemoryRegion bindable;
    private MemoryWindow mw;

    @BeforeEach
    void sides() {
        before = VerbsResources.snapshot();
        a = new RdmaSide(RdmaDevices.DEV0, RdmaDevices.ADDR0, 0x1001, init -> { });
        b = new RdmaSide(RdmaDevices.DEV1, RdmaDevices.ADDR1, 0x2002, init -> { });
        MemorySegment exposed = a.arena.allocate(8192, 4096);
        bindable = a.pd.register(exposed, Access.LOCAL_WRITE.bit() | Access.MW_BIND.bit());
        mw = a.pd.allocateMemoryWindow();
        QpEndpoint ea = a.endpoint();
        QpEndpoint eb = b.endpoint();
        a.qp.connect(a.attributes(eb).timeout(10).retryCount(3));
        b.qp.connect(b.attributes(ea));
        b.qp.toError(); // B drops all that A sends from now on: A retransmits
        assertEquals(QpState.ERR, b.qp.state());
    }

    @AfterEach
    void close() {
        if (mw != null) {
            mw.close();
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

    private boolean softRoce() {
        return a.ctx.queryDevice().vendorId() == 0xFFFFFF;
    }

    /** The control: a SEND nobody acknowledges fails with RETRY_EXC_ERR once its retries are spent, on rxe too. */
    @Test
    void aSendNobodyAcknowledgesFailsWithRetryExceeded() {
        a.sends.get(0).clear().wrId(1).send(a.mr, 0, 64).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 1));
        a.awaitOne();
        assertEquals(1, a.wc.wrId(0));
        assertEquals(WcStatus.RETRY_EXC_ERR, a.wc.status(0), a.wc.describe(0));
        assertEquals(QpState.ERR, a.qp.state());
    }

    /**
     * A bind posted behind that SEND: by the spec the SEND fails with RETRY_EXC_ERR and the bind is
     * flushed; on rxe the bind is executed again at the first retransmission, fails, and both complete
     * flushed (see the class comment).
     */
    @Test
    void aBindBehindARetransmittedSendIsExecutedAgainOnSoftRoce() {
        a.sends.get(0).clear().wrId(1).send(a.mr, 0, 64).signaled(true);
        a.sends.get(1).clear().wrId(2).bindMemoryWindow(mw, MemoryWindow.nextRkey(mw.rkey()), bindable,
                bindable.address(100, 1000), 1000, Access.REMOTE_READ.bit()).signaled(true);
        assertEquals(0, a.qp.postSend(a.sends, 2));
        a.awaitOne();
        assertEquals(1, a.wc.wrId(0));
        assertEquals(softRoce() ? WcStatus.WR_FLUSH_ERR : WcStatus.RETRY_EXC_ERR, a.wc.status(0), a.wc.describe(0));
        a.awaitOne();
        assertEquals(2, a.wc.wrId(0));
        assertEquals(WcStatus.WR_FLUSH_ERR, a.wc.status(0), a.wc.describe(0));
        assertEquals(QpState.ERR, a.qp.state());
    }
}
