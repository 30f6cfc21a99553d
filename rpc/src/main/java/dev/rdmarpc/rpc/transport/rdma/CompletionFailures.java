package dev.rdmarpc.rpc.transport.rdma;

import dev.rdmarpc.ibverbs.verbs.WcStatus;
import dev.rdmarpc.ibverbs.verbs.WorkCompletions;
import java.io.IOException;

/**
 * What a failed work completion does to its {@link RdmaConnection}: a flushed one (the queue pair is
 * in ERR already) only closes it; any other is counted, logged, reported as a JFR event, and closes it
 * with a reason that says what the status means here.
 */
final class CompletionFailures {
    /** Logged under the connection's name: the lines are the connection's. */
    private static final System.Logger LOG = System.getLogger(RdmaConnection.class.getName());

    private CompletionFailures() {
    }

    /** A work request of {@code conn} failed: counted, logged, and the connection closes (a flush error only closes). */
    static void failed(RdmaConnection conn, String operation, WorkCompletions wc, int i) {
        RdmaLoop loop = conn.loop();
        WcStatus s = wc.status(i);
        if (s == WcStatus.WR_FLUSH_ERR) {
            // The error that failed the queue pair may wait in the other completion queue (a READ's
            // remote access error in the send queue's, while the receives are flushed): the device
            // completes it before it flushes anything, so the poll under way sees it, and its reason
            // closes the connection first. Only a flush with no such error closes it as flushed.
            if (!conn.isClosing()) {
                loop.executeLater(() -> {
                    if (!conn.isClosing()) {
                        conn.closeNow(new IOException("RDMA " + operation + " flushed: the queue pair failed"));
                    }
                });
            }
            return;
        }
        loop.metrics.completionErrors.increment();
        LOG.log(System.Logger.Level.WARNING, "{0}: {1} work request failed: {2} ({3}), vendor error 0x{4}, {5}",
                conn, operation, s, s.text(), Integer.toHexString(wc.vendorError(i)), wc.describe(i));
        if (s == WcStatus.RNR_RETRY_EXC_ERR) {
            loop.metrics.rnrErrors.increment();
        } else if (s == WcStatus.RETRY_EXC_ERR) {
            loop.metrics.retryErrors.increment();
        }
        RdmaEvents.completionError(conn.device.context.name(), conn.qp.qpNum(), String.valueOf(conn.remoteAddress()),
                operation, s.name(), wc.vendorError(i));
        if (!conn.isClosing()) {
            conn.closeNow(new IOException("RDMA " + operation + " failed: " + s + " (" + s.text() + ")" + why(operation, s)));
        }
    }

    /** @return the operation a failed send-side work request of {@code kind} ({@link WorkRequestId}) was */
    static String operation(int kind) {
        return switch (kind) {
            case WorkRequestId.DATA -> "send";
            case WorkRequestId.CREDIT -> "credit";
            case WorkRequestId.BIND -> "memory window bind";
            case WorkRequestId.INVALIDATE -> "memory window invalidation";
            default -> READ;
        };
    }

    /** The operation {@link RdmaConnection#onError} names for an RDMA READ of a peer's rendezvous frame. */
    static final String READ = "READ of a rendezvous frame";

    /** What a failed work request's status means here, for the close's reason ("" when nothing more is known). */
    static String why(String operation, WcStatus s) {
        if (s == WcStatus.RETRY_EXC_ERR) {
            return " (the peer stopped answering)";
        }
        if (s == WcStatus.REM_ACCESS_ERR && operation.equals(READ)) {
            // the peer's device refused the key or range: revoked (an earlier frame's), or never the frame's
            return " (the peer refused the key its descriptor gave: not valid for that frame's memory)";
        }
        return "";
    }
}
