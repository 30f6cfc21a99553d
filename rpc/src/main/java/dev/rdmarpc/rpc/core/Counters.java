package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.RpcMetrics;
import java.util.concurrent.atomic.LongAdder;

/** The counters behind {@link RpcMetrics}: striped adders, no allocation once warmed up. */
public final class Counters implements RpcMetrics {
    public final LongAdder calls = new LongAdder();
    public final LongAdder errors = new LongAdder();
    public final LongAdder timeouts = new LongAdder();
    public final LongAdder rejected = new LongAdder();
    public final LongAdder bytesSent = new LongAdder();
    public final LongAdder bytesReceived = new LongAdder();
    public final LongAdder connectionsOpened = new LongAdder();
    public final LongAdder connectionsClosed = new LongAdder();
    public final LongAdder protocolErrors = new LongAdder();
    public final LongAdder inFlight = new LongAdder();
    public final LongAdder cancelled = new LongAdder();
    public final LongAdder responseAttachmentBytesCopied = new LongAdder();

    /** Creates zeroed counters. */
    public Counters() {
    }

    @Override
    public long calls() {
        return calls.sum();
    }

    @Override
    public long errors() {
        return errors.sum();
    }

    @Override
    public long timeouts() {
        return timeouts.sum();
    }

    @Override
    public long rejected() {
        return rejected.sum();
    }

    @Override
    public long bytesSent() {
        return bytesSent.sum();
    }

    @Override
    public long bytesReceived() {
        return bytesReceived.sum();
    }

    @Override
    public long connectionsOpened() {
        return connectionsOpened.sum();
    }

    @Override
    public long connectionsClosed() {
        return connectionsClosed.sum();
    }

    @Override
    public long protocolErrors() {
        return protocolErrors.sum();
    }

    @Override
    public long inFlight() {
        return inFlight.sum();
    }

    @Override
    public long cancelled() {
        return cancelled.sum();
    }

    @Override
    public long responseAttachmentBytesCopied() {
        return responseAttachmentBytesCopied.sum();
    }

    @Override
    public String toString() {
        return "RpcMetrics[calls=" + calls() + ", errors=" + errors() + ", timeouts=" + timeouts() + ", rejected="
                + rejected() + ", sent=" + bytesSent() + " B, received=" + bytesReceived() + " B, connections="
                + connectionsActive() + " (opened " + connectionsOpened() + "), protocolErrors=" + protocolErrors()
                + ", inFlight=" + inFlight() + ", cancelled=" + cancelled() + ", responseAttachmentBytesCopied="
                + responseAttachmentBytesCopied() + "]";
    }
}
