package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.core.StreamFlow;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * A streaming call on the client: it holds its call slot in the connection's {@link CallTable} (as the slot's sink)
 * from its opening until the server's response ends it, and its {@link StreamFlow} holds what came
 * in and what may go out.
 */
final class ClientStreamCall<Q, R> extends ClientStreamSink implements ClientStream<Q, R> {
    private final Method<Q, R> method;
    private final StreamFlow flow;
    /** How long {@link #close} after a half-close waits for the server's end before it cancels: 200 ms. */
    static final long CLOSE_LINGER_NANOS = 200_000_000L;

    /** The stream's deadline ({@link System#nanoTime()}); far away when it has none. */
    private final long deadlineNanos;
    private volatile boolean halfClosed;
    private volatile Metadata trailers = Metadata.EMPTY;
    /** Told once, when the stream ends (the client's interceptors' afterCall); null for none. */
    private volatile StreamEnd endListener;

    /** Sends this stream's window updates (one object, not one per receive). */
    private final java.util.function.LongPredicate granter;
    /** What the flow's messages say this stream's messages are (built once, not per message). */
    private final String sendWhat;
    private final String receiveWhat;

    ClientStreamCall(ClientStreams streams, Method<Q, R> method, int window, long deadlineNanos) {
        super(streams);
        this.granter = give -> streams.writeWindow(this, give);
        this.sendWhat = "a message of " + method.name();
        this.receiveWhat = "of " + method.name();
        this.method = method;
        this.flow = new StreamFlow(window);
        this.deadlineNanos = deadlineNanos;
    }

    @Override
    StreamFlow flow() {
        return flow;
    }

    @Override
    Method<Q, R> method() {
        return method;
    }

    // ------------------------------------------------------------------ the I/O thread

    @Override
    void onMessage(MemorySegment buf, long offset, int length) {
        deliver(buf, offset, length);
    }

    @Override
    void ended(RpcException error, Metadata trailers) {
        if (error == null) {
            this.trailers = trailers;
        }
        if (flow.end(error, false)) {
            tellEnd(error, error == null ? trailers : error.metadata());
        }
    }

    @Override
    void failed(RpcException error) {
        if (flow.end(error, true)) {
            tellEnd(error, error.metadata());
        }
    }

    /**
     * @param listener told once when the stream ends: the failure (null when the server ended it
     *                 well) and the metadata of its end; before the stream is used
     */
    void onEnd(StreamEnd listener) {
        this.endListener = listener;
    }

    private void tellEnd(RpcException error, Metadata md) {
        tellEnd(endListener, error, md);
    }

    // ------------------------------------------------------------------ the caller

    @Override
    public void send(Q message) {
        checkSend(message, halfClosed);
        Codec<Q> codec = method.requestCodec();
        int plen = codec.encodedSize(message);
        long frame = (long) FrameDescriptor.HEADER_LENGTH + plen;
        streams.checkFrame(frame);
        flow.awaitSendWindow((int) frame, deadlineNanos, sendWhat);
        streams.writeMessage(this, codec, message, plen, deadlineNanos);
    }

    @Override
    public void halfClose() {
        if (halfClosed) {
            return;
        }
        halfClosed = true;
        if (!flow.isEnded()) {
            streams.writeEnd(this, deadlineNanos);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public R receive() {
        Object m = flow.take(deadlineNanos, granter, receiveWhat);
        return m == StreamFlow.END ? null : (R) m;
    }

    @Override
    public Metadata trailers() {
        return trailers;
    }

    /**
     * Ends the stream here unless it ended: before its deadline a cancel, which the server is told;
     * at or after it the deadline's end ({@code DEADLINE_EXCEEDED}), which the server reaches on its
     * own (it has the same deadline), so no cancel is sent and the server does not see one.
     */
    @Override
    public void cancel() {
        RpcException end = cancelEnd(deadlineNanos);
        if (flow.end(end, true)) {
            tellEnd(end, Metadata.EMPTY);
            freeSlot(end);
        }
    }

    @Override
    public boolean isDone() {
        return flow.isEnded();
    }

    /**
     * Done with the stream. When it has not ended and this side half-closed, waits for the server's
     * end up to {@link #CLOSE_LINGER_NANOS} (and the deadline), dropping messages nobody reads: a
     * server that ends it then ends it with its own status, never a cancel. Otherwise, or when the
     * end does not come in that time, {@link #cancel}.
     */
    @Override
    public void close() {
        if (flow.isEnded()) {
            return;
        }
        if (halfClosed) {
            long until = Math.min(deadlineNanos, System.nanoTime() + CLOSE_LINGER_NANOS);
            try {
                while (flow.take(until, granter, receiveWhat) != StreamFlow.END) {
                    // a message nobody reads
                }
                return;
            } catch (RpcException e) {
                if (flow.isEnded()) {
                    return; // the server ended it with an error, as the reader would have seen
                }
            }
        }
        cancel();
    }

    @Override
    public String toString() {
        return "ClientStream[" + method.name() + ", id=" + id + (flow.isEnded() ? ", ended" : "") + "]";
    }
}
