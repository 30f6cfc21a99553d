package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.core.StreamFlow;

/**
 * A streaming call on the server, blocking ({@link ServerStreamCall}) or asynchronous
 * ({@link AsyncServerStreamCall}): its {@link StreamFlow} holds what came in and what may go out, and
 * its sizes are its messages' bytes each way.
 */
abstract class HeldStream extends HeldCall {
    final StreamFlow flow;
    private final Metadata requestMetadata;

    HeldStream(ServerConnection connection, MethodRegistry.Entry entry, long id, int mid, boolean hasDeadline,
               long deadlineNanos, Metadata requestMetadata) {
        super(connection, entry, id, mid, hasDeadline, deadlineNanos);
        this.requestMetadata = requestMetadata;
        this.flow = new StreamFlow(connection.core().streamWindowBytes);
    }

    @Override
    public Metadata requestMetadata() {
        return requestMetadata;
    }

    /** @return bytes of the messages the client sent on this stream so far */
    @Override
    public long requestBytes() {
        return flow.messageBytesIn();
    }

    /** @return bytes of the messages this side sent on the stream so far */
    @Override
    public long responseBytes() {
        return flow.messageBytesOut();
    }

    @Override
    public Attachment requestAttachment() {
        return Attachment.NONE;
    }
}
