package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.core.StreamFlow;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import java.lang.foreign.MemorySegment;

/**
 * A stream held in a call slot of a connection's {@link CallTable}, blocking ({@link ClientStreamCall}) or
 * asynchronous ({@link AsyncClientStreamCall}): what the I/O thread tells it.
 */
abstract class ClientStreamSink {
    /** Set once the slot was reserved; 0 before. */
    volatile long id;
    /** The connection's streams, which write this stream's frames. */
    final ClientStreams streams;

    ClientStreamSink(ClientStreams streams) {
        this.streams = streams;
    }

    abstract Method<?, ?> method();

    abstract StreamFlow flow();

    /** A message frame of this stream arrived (I/O thread). */
    abstract void onMessage(MemorySegment buf, long offset, int length);

    /** The server granted more room (I/O thread). */
    void onWindow(int increment) {
        flow().granted(increment);
    }

    /** The transport sent something (I/O thread): an asynchronous stream writes what waits for room. */
    void onRoom() {
    }

    /** The server's response ended the stream (its slot is free already). */
    abstract void ended(RpcException error, Metadata trailers);

    /** The stream failed here (timeout, close, cancel): nothing more is read. */
    abstract void failed(RpcException error);

    /**
     * Takes a message frame into the flow (I/O thread): a half-close, a message past the window or one
     * that does not decode fails the stream (the server is sent a cancel).
     *
     * @return true when the message was delivered to the flow
     */
    final boolean deliver(MemorySegment buf, long offset, int length) {
        StreamFlow flow = flow();
        Method<?, ?> method = method();
        if ((FrameHeader.flags(buf, offset) & FrameDescriptor.FLAG_END_STREAM) != 0) {
            streams.failed(this, new RpcException(Status.PROTOCOL_ERROR, "server half-closed a stream: it ends"
                    + " streams with a response"));
            return false;
        }
        if (!flow.admit(length)) {
            if (flow.failure() != null && !flow.isEnded()) {
                streams.failed(this, flow.failure()); // past its window: cancel the stream, free the slot
            }
            return false;
        }
        Object value;
        try {
            value = StreamMessages.decode(method.responseCodec(), buf, offset, streams.connection());
        } catch (RuntimeException e) {
            streams.failed(this, new RpcException(Status.PROTOCOL_ERROR,
                    "message of " + method.name() + " could not be decoded: " + e.getMessage(), e));
            return false;
        }
        flow.deliver(value, length);
        return true;
    }

    /** Tells {@code listener} (when there is one) that the stream ended, with its message bytes each way. */
    final void tellEnd(StreamEnd listener, RpcException error, Metadata md) {
        if (listener != null) {
            listener.ended(error, md, flow().messageBytesOut(), flow().messageBytesIn());
        }
    }

    /** @return the end a cancel gives the stream now: its deadline's once that passed, else CANCELLED */
    final RpcException cancelEnd(long deadlineNanos) {
        return System.nanoTime() - deadlineNanos >= 0
                ? new RpcException(Status.DEADLINE_EXCEEDED, "stream of " + method().name() + ": its deadline passed")
                : new RpcException(Status.CANCELLED, "stream of " + method().name() + " cancelled");
    }

    /**
     * Frees the slot of a stream that {@code end} ended here: a cancel is sent to the server, unless the
     * deadline passed (the server reaches it on its own, with the same deadline).
     */
    final void freeSlot(RpcException end) {
        long callId = id;
        if (callId > 0) {
            if (end.status() == Status.DEADLINE_EXCEEDED) {
                streams.expired(callId);
            } else {
                streams.cancel(callId);
            }
        }
    }

    /** The checks of every send: a message (not null), and no half-close before it. */
    static void checkSend(Object message, boolean halfClosed) {
        StreamMessages.requireMessage(message);
        if (halfClosed) {
            throw new IllegalStateException("send after halfClose");
        }
    }
}
