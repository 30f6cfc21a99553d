package dev.rdmarpc.rpc.transport.rdma;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of an {@link RdmaTransport}, readable from code at any time (all thread-safe; each is a
 * sum over the transport's connections since it was created).
 */
public final class RdmaMetrics {
    final LongAdder messagesSent = new LongAdder();
    final LongAdder messagesReceived = new LongAdder();
    final LongAdder creditOnlySent = new LongAdder();
    final LongAdder inlineSent = new LongAdder();
    final LongAdder completionErrors = new LongAdder();
    final LongAdder rnrErrors = new LongAdder();
    final LongAdder retryErrors = new LongAdder();
    final LongAdder windowStalls = new LongAdder();
    final LongAdder creditStalls = new LongAdder();
    final LongAdder receiveGrowths = new LongAdder();
    final LongAdder receiveGrowthsRefused = new LongAdder();
    final LongAdder frameShareWaits = new LongAdder();
    final LongAdder sharedReceiveGrowths = new LongAdder();
    final LongAdder sharedReceiveLimitEvents = new LongAdder();
    final LongAdder connectionsRefused = new LongAdder();
    final LongAdder tcpFallbackConnections = new LongAdder();
    final LongAdder wakeups = new LongAdder();
    final LongAdder zeroCopyBytes = new LongAdder();
    final LongAdder rendezvousSent = new LongAdder();
    final LongAdder rendezvousRead = new LongAdder();
    final LongAdder rendezvousBytesRead = new LongAdder();
    final LongAdder rendezvousBytesLanded = new LongAdder();
    final LongAdder attachmentSinksRefused = new LongAdder();
    final LongAdder reassemblyCopiedBytes = new LongAdder();
    final LongAdder rendezvousRegistrations = new LongAdder();

    RdmaMetrics() {
    }

    /** @return SEND work requests posted with data (a message carries one or more frames, or part of one) */
    public long messagesSent() {
        return messagesSent.sum();
    }

    /** @return data messages received */
    public long messagesReceived() {
        return messagesReceived.sum();
    }

    /** @return credit-only messages sent (credits going back while no data was leaving) */
    public long creditOnlySent() {
        return creditOnlySent.sum();
    }

    /** @return data messages sent inline */
    public long inlineSent() {
        return inlineSent.sum();
    }

    /** @return work completions with an error status other than a flush (each also a JFR event) */
    public long completionErrors() {
        return completionErrors.sum();
    }

    /** @return completions with status RNR_RETRY_EXC_ERR: a SEND found no receive posted (should stay 0) */
    public long rnrErrors() {
        return rnrErrors.sum();
    }

    /** @return completions with status RETRY_EXC_ERR: the peer stopped acknowledging (gone) */
    public long retryErrors() {
        return retryErrors.sum();
    }

    /** @return times committed frames had to wait for the send window */
    public long windowStalls() {
        return windowStalls.sum();
    }

    /** @return times committed frames had to wait for credits from the peer */
    public long creditStalls() {
        return creditStalls.sum();
    }

    /** @return times a connection grew its receive queue because its peer ran out of credits */
    public long receiveGrowths() {
        return receiveGrowths.sum();
    }

    /**
     * @return times a server connection's private receive queue did not grow because its peer's
     *         address had claimed its whole {@link RdmaConfig#poolBytesPerAddress}
     */
    public long receiveGrowthsRefused() {
        return receiveGrowthsRefused.sum();
    }

    /**
     * @return times a server connection's large frame had to wait because its peer's address had
     *         claimed its whole {@code limits.maxFrameBytesPerAddress} for other frames
     */
    public long frameShareWaits() {
        return frameShareWaits.sum();
    }

    /** @return times a shared receive queue grew because fewer than a quarter of its receives remained posted */
    public long sharedReceiveGrowths() {
        return sharedReceiveGrowths.sum();
    }

    /** @return SRQ limit events the devices reported (each followed by a growth) */
    public long sharedReceiveLimitEvents() {
        return sharedReceiveLimitEvents.sum();
    }

    /** @return RDMA connections refused (pool high-water mark, no device, bad hello) */
    public long connectionsRefused() {
        return connectionsRefused.sum();
    }

    /** @return connections accepted from plain TCP clients by an RDMA server */
    public long tcpConnections() {
        return tcpFallbackConnections.sum();
    }

    /** @return attachment bytes sent straight from registered application memory, without a copy (or read from it by the peer, by rendezvous) */
    public long zeroCopyBytes() {
        return zeroCopyBytes.sum();
    }

    /**
     * @return frames sent by rendezvous: the peer read them under a key for them alone (a memory window
     *         bound to them, or on Soft-RoCE a region registered on them)
     */
    public long rendezvousSent() {
        return rendezvousSent.sum();
    }

    /** @return frames received by rendezvous: read with RDMA READ straight into the buffer the handler got */
    public long rendezvousRead() {
        return rendezvousRead.sum();
    }

    /** @return bytes of the frames counted by {@link #rendezvousRead()} */
    public long rendezvousBytesRead() {
        return rendezvousBytesRead.sum();
    }

    /**
     * @return bytes of rendezvous frames' attachments read straight into memory the receiving handler
     *         gave ({@link dev.rdmarpc.rpc.transport.FrameHandler#attachmentSink}): a client's response
     *         attachments written by the NIC into the buffer its caller provided
     *         ({@link dev.rdmarpc.rpc.CallOptions#withResponseAttachment})
     */
    public long rendezvousBytesLanded() {
        return rendezvousBytesLanded.sum();
    }

    /**
     * @return rendezvous frames whose attachment the handler wanted in memory this transport cannot write
     *         into (not registered with it, or its registration closing, or read-only): they were read
     *         into a pooled buffer, and the handler copied the attachment
     */
    public long attachmentSinksRefused() {
        return attachmentSinksRefused.sum();
    }

    /**
     * @return bytes the receiving side copied to reassemble frames larger than a receive buffer (the
     *         pieces of split SENDs, and the copies when a reassembly buffer is replaced by a larger one);
     *         rendezvous frames add nothing here
     */
    public long reassemblyCopiedBytes() {
        return reassemblyCopiedBytes.sum();
    }

    /**
     * @return parts of rendezvous frames sent that were registered on their own for their transfer
     *         (each deregistered when the peer reported the frame done) instead of being exposed through
     *         a memory window: on a device that executes window binds again after a retransmission
     *         (Soft-RoCE) the parts of a frame that found the connection busy (work requests outstanding,
     *         or another rendezvous frame held), and those in the application's registered memory; on
     *         other devices none is, and this stays 0
     */
    public long rendezvousRegistrations() {
        return rendezvousRegistrations.sum();
    }

    /** @return times an I/O thread woke from sleep (event mode) */
    public long wakeups() {
        return wakeups.sum();
    }

    @Override
    public String toString() {
        return "RdmaMetrics[sent=" + messagesSent() + ", received=" + messagesReceived() + ", creditOnly=" + creditOnlySent()
                + ", inline=" + inlineSent() + ", errors=" + completionErrors() + ", rnr=" + rnrErrors() + ", retry="
                + retryErrors() + ", windowStalls=" + windowStalls() + ", creditStalls=" + creditStalls() + ", growths="
                + receiveGrowths() + ", growthsRefused=" + receiveGrowthsRefused() + ", frameShareWaits=" + frameShareWaits()
                + ", srqGrowths=" + sharedReceiveGrowths() + ", srqLimits=" + sharedReceiveLimitEvents() + ", refused=" + connectionsRefused() + ", tcp=" + tcpConnections() + ", wakeups="
                + wakeups() + ", zeroCopyBytes=" + zeroCopyBytes() + ", rendezvousSent=" + rendezvousSent() + ", rendezvousRead="
                + rendezvousRead() + ", rendezvousBytesRead=" + rendezvousBytesRead() + ", rendezvousBytesLanded="
                + rendezvousBytesLanded() + ", attachmentSinksRefused=" + attachmentSinksRefused() + ", reassemblyCopiedBytes="
                + reassemblyCopiedBytes() + ", rendezvousRegistrations=" + rendezvousRegistrations() + "]";
    }
}
