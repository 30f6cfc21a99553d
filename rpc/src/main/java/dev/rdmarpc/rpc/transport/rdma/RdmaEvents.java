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
            new CompletionError(device, qpn, peer, operation, status, vendorError).commit();
        }
    }

    static boolean stallEnabled() {
        return STALL_PROBE.isEnabled();
    }

    /** Only after {@link #stallEnabled()} said yes: the caller measures the stall only then. */
    static void stall(int qpn, String peer, String reason, long durationNanos, long queuedBytes) {
        new SendStall(qpn, peer, reason, durationNanos, queuedBytes).commit();
    }

    static void poolPressure(String what, String peer, long inUseBytes, long highWaterMark, long poolBytes) {
        if (POOL_PROBE.isEnabled()) {
            new PoolPressure(what, peer, inUseBytes, highWaterMark, poolBytes).commit();
        }
    }

    static void qpState(String device, int qpn, String peer, String state, String reason) {
        if (QP_PROBE.isEnabled()) {
            new QpStateChange(device, qpn, peer, state, reason).commit();
        }
    }

    /** What every event here shares: its category, and no stack trace (the loop's stack says nothing). */
    @Category({"rdmarpc", "RDMA"})
    @StackTrace(false)
    abstract static class RdmaEvent extends Event {
    }

    /** An event about one queue pair of a connection: which device, which QP, which peer. */
    abstract static class QueuePairEvent extends RdmaEvent {
        @Label("Device")
        String device;
        @Label("QP Number")
        int qpn;
        @Label("Peer")
        String peer;

        QueuePairEvent() {
        }

        QueuePairEvent(String device, int qpn, String peer) {
            this.device = device;
            this.qpn = qpn;
            this.peer = peer;
        }
    }

    @Name("rdmarpc.RdmaCompletionError")
    @Label("RDMA Completion Error")
    @Description("A work request completed with an error: retry exceeded (peer gone), RNR retry exceeded (no receive posted), access or length errors")
    static final class CompletionError extends QueuePairEvent {
        @Label("Operation")
        @Description("send, credit (credit-only send) or receive")
        String operation;
        @Label("Status")
        String status;
        @Label("Vendor Error")
        int vendorError;

        CompletionError() {
        }

        CompletionError(String device, int qpn, String peer, String operation, String status, int vendorError) {
            super(device, qpn, peer);
            this.operation = operation;
            this.status = status;
            this.vendorError = vendorError;
        }
    }

    @Name("rdmarpc.RdmaSendStall")
    @Label("RDMA Send Stall")
    @Description("Committed frames waited: for the send window (all sends in flight) or for credits (no receive known posted at the peer)")
    static final class SendStall extends RdmaEvent {
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

        SendStall() {
        }

        SendStall(int qpn, String peer, String reason, long stalledFor, long queuedBytes) {
            this.qpn = qpn;
            this.peer = peer;
            this.reason = reason;
            this.stalledFor = stalledFor;
            this.queuedBytes = queuedBytes;
        }
    }

    @Name("rdmarpc.RdmaPoolPressure")
    @Label("RDMA Pool Pressure")
    @Description("The registered buffer pool reached its high-water mark (a connection was refused) or ran out of buffers")
    static final class PoolPressure extends RdmaEvent {
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

        PoolPressure() {
        }

        PoolPressure(String what, String peer, long inUse, long highWaterMark, long poolBytes) {
            this.what = what;
            this.peer = peer;
            this.inUse = inUse;
            this.highWaterMark = highWaterMark;
            this.poolBytes = poolBytes;
        }
    }

    @Name("rdmarpc.RdmaQpState")
    @Label("RDMA Queue Pair State")
    @Description("A queue pair of a connection changed state: RTS (connected), ERR (failed or closing), DESTROYED")
    static final class QpStateChange extends QueuePairEvent {
        @Label("State")
        String state;
        @Label("Reason")
        String reason;

        QpStateChange() {
        }

        QpStateChange(String device, int qpn, String peer, String state, String reason) {
            super(device, qpn, peer);
            this.state = state;
            this.reason = reason;
        }
    }
}
