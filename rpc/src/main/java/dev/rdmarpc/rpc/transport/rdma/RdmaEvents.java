package dev.rdmarpc.rpc.transport.rdma;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * JDK Flight Recorder events of the RDMA transport: what operators hunt when RDMA misbehaves. Each
 * event object is created only while a recording has that event enabled, so they cost nothing
 * otherwise.
 */
final class RdmaEvents {
    private static final CompletionError COMPLETION_PROBE = new CompletionError();
    private static final SendStall STALL_PROBE = new SendStall();
    private static final PoolPressure POOL_PROBE = new PoolPressure();
    private static final QpStateChange QP_PROBE = new QpStateChange();

    private RdmaEvents() {
    }

    static void completionError(String device, int qpn, String peer, String operation, String status, int vendorError) {
        if (COMPLETION_PROBE.isEnabled()) {
            CompletionError e = new CompletionError();
            e.device = device;
            e.qpn = qpn;
            e.peer = peer;
            e.operation = operation;
            e.status = status;
            e.vendorError = vendorError;
            e.commit();
        }
    }

    static boolean stallEnabled() {
        return STALL_PROBE.isEnabled();
    }

    static void stall(int qpn, String peer, String reason, long durationNanos, long queuedBytes) {
        SendStall e = new SendStall();
        e.qpn = qpn;
        e.peer = peer;
        e.reason = reason;
        e.stalledFor = durationNanos;
        e.queuedBytes = queuedBytes;
        e.commit();
    }

    static void poolPressure(String what, String peer, long inUseBytes, long highWaterMark, long poolBytes) {
        if (POOL_PROBE.isEnabled()) {
            PoolPressure e = new PoolPressure();
            e.what = what;
            e.peer = peer;
            e.inUse = inUseBytes;
            e.highWaterMark = highWaterMark;
            e.poolBytes = poolBytes;
            e.commit();
        }
    }

    static void qpState(String device, int qpn, String peer, String state, String reason) {
        if (QP_PROBE.isEnabled()) {
            QpStateChange e = new QpStateChange();
            e.device = device;
            e.qpn = qpn;
            e.peer = peer;
            e.state = state;
            e.reason = reason;
            e.commit();
        }
    }

    @Name("rdmarpc.RdmaCompletionError")
    @Label("RDMA Completion Error")
    @Description("A work request completed with an error: retry exceeded (peer gone), RNR retry exceeded (no receive posted), access or length errors")
    @Category({"rdmarpc", "RDMA"})
    @StackTrace(false)
    static final class CompletionError extends Event {
        @Label("Device")
        String device;
        @Label("QP Number")
        int qpn;
        @Label("Peer")
        String peer;
        @Label("Operation")
        @Description("send, credit (credit-only send) or receive")
        String operation;
        @Label("Status")
        String status;
        @Label("Vendor Error")
        int vendorError;
    }

    @Name("rdmarpc.RdmaSendStall")
    @Label("RDMA Send Stall")
    @Description("Committed frames waited: for the send window (all sends in flight) or for credits (no receive known posted at the peer)")
    @Category({"rdmarpc", "RDMA"})
    @StackTrace(false)
    static final class SendStall extends Event {
        @Label("QP Number")
        int qpn;
        @Label("Peer")
        String peer;
        @Label("Reason")
        String reason;
        // Not "duration": every JFR event has that field already, and a second one makes JFR refuse the class.
        @Label("Stalled For")
        @Timespan(Timespan.NANOSECONDS)
        long stalledFor;
        @Label("Queued")
        @DataAmount
        long queuedBytes;
    }

    @Name("rdmarpc.RdmaPoolPressure")
    @Label("RDMA Pool Pressure")
    @Description("The registered buffer pool reached its high-water mark (a connection was refused) or ran out of buffers")
    @Category({"rdmarpc", "RDMA"})
    @StackTrace(false)
    static final class PoolPressure extends Event {
        @Label("What")
        String what;
        @Label("Peer")
        String peer;
        @Label("In Use")
        @DataAmount
        long inUse;
        @Label("High-Water Mark")
        @DataAmount
        long highWaterMark;
        @Label("Pool Size")
        @DataAmount
        long poolBytes;
    }

    @Name("rdmarpc.RdmaQpState")
    @Label("RDMA Queue Pair State")
    @Description("A queue pair of a connection changed state: RTS (connected), ERR (failed or closing), DESTROYED")
    @Category({"rdmarpc", "RDMA"})
    @StackTrace(false)
    static final class QpStateChange extends Event {
        @Label("Device")
        String device;
        @Label("QP Number")
        int qpn;
        @Label("Peer")
        String peer;
        @Label("State")
        String state;
        @Label("Reason")
        String reason;
    }
}
