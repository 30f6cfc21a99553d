package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.AsyncClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.StreamListener;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.core.AsyncStreamIo;
import dev.rdmarpc.rpc.core.StreamEnd;
import dev.rdmarpc.rpc.core.StreamFlow;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.Executor;

/**
 * An asynchronous streaming call on the client: it holds its call slot in the connection's {@link CallTable} from its
 * opening until the server's response (or a cancel, the deadline, a close) ends it, like a
 * {@link ClientStreamCall}, but nothing waits: what cannot go out yet waits in its
 * {@link AsyncStreamIo}'s outbox, and what came in goes to the listener as it is requested.
 */
final class AsyncClientStreamCall<Q, R> extends ClientStreamSink implements AsyncClientStream<Q, R> {
    /** The opening frame, queued first; what it carries is in {@link #openMetadata} and {@link #openNoDeadline}. */
    private static final Object OPEN = new Object();

    private final Method<Q, R> method;
    private final StreamFlow flow;
    private final Io io;
    private volatile long deadlineNanos;
    private volatile boolean halfClosed;
    private volatile Metadata endMetadata = Metadata.EMPTY;
    /** The opening's metadata and deadline mode: set before {@link #OPEN} is queued, read by whoever writes it. */
    private Metadata openMetadata;
    private boolean openNoDeadline;
    private final StreamEnd endListener;

    @SuppressWarnings("unchecked")
    AsyncClientStreamCall(ClientStreams streams, Method<Q, R> method, int window, StreamListener<? super R> listener,
                          Executor executor, StreamEnd endListener) {
        super(streams);
        this.method = method;
        this.flow = new StreamFlow(window);
        this.io = new Io(flow, executor);
        this.io.listener((StreamListener<Object>) listener);
        this.endListener = endListener;
    }

    @Override
    Method<Q, R> method() {
        return method;
    }

    @Override
    StreamFlow flow() {
        return flow;
    }

    void deadline(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** The slot is held: queue the opening frame (written at once when there is room). */
    void open(Metadata metadata, boolean noDeadline) {
        openMetadata = metadata;
        openNoDeadline = noDeadline;
        io.queueMarker(OPEN); // the outbox's lock orders these writes before the writer's reads
    }

    // ------------------------------------------------------------------ the I/O thread

    @Override
    void onMessage(MemorySegment buf, long offset, int length) {
        if (deliver(buf, offset, length)) {
            io.signal();
        }
    }

    @Override
    void onWindow(int increment) {
        flow.granted(increment);
        io.flush();
    }

    @Override
    void onRoom() {
        io.onRoom();
    }

    @Override
    void ended(RpcException error, Metadata trailers) {
        endMetadata = error == null ? trailers : error.metadata();
        if (flow.end(error, false)) {
            io.dropOutbox();
            tellEnd(error, endMetadata);
        }
        io.signal();
    }

    @Override
    void failed(RpcException error) {
        endMetadata = error.metadata();
        if (flow.end(error, true)) {
            io.dropOutbox();
            tellEnd(error, endMetadata);
        }
        io.signal();
    }

    private void tellEnd(RpcException error, Metadata md) {
        tellEnd(endListener, error, md);
    }

    // ------------------------------------------------------------------ AsyncClientStream

    @Override
    public void send(Q message) {
        checkSend(message, halfClosed);
        int plen = method.requestCodec().encodedSize(message);
        streams.checkFrame((long) FrameDescriptor.HEADER_LENGTH + plen);
        io.send(message, plen);
    }

    @Override
    public boolean isReady() {
        return !halfClosed && io.isReady();
    }

    @Override
    public void request(int n) {
        io.request(n);
    }

    @Override
    public void halfClose() {
        if (halfClosed) {
            return;
        }
        halfClosed = true;
        io.queueMarker(AsyncStreamIo.HALF_CLOSE);
    }

    @Override
    public void cancel() {
        RpcException end = cancelEnd(deadlineNanos);
        if (flow.end(end, true)) {
            io.dropOutbox();
            tellEnd(end, Metadata.EMPTY);
            freeSlot(end);
        } else {
            flow.discard(); // the server's end came first: what it sent before, unread, is dropped now
        }
        io.signal();
    }

    @Override
    public boolean isDone() {
        return flow.isEnded();
    }

    @Override
    public String toString() {
        return "AsyncClientStream[" + method.name() + ", id=" + id + (flow.isEnded() ? ", ended" : "") + "]";
    }

    /** The outbox and the listener of this stream, written through the connection's {@link ClientStreams}. */
    private final class Io extends AsyncStreamIo {
        Io(StreamFlow flow, Executor executor) {
            super(flow, executor);
        }

        @Override
        @SuppressWarnings("unchecked")
        protected int writeMessage(Object value, int plen) {
            try {
                return streams.writeAsyncMessage(AsyncClientStreamCall.this, (Codec<Object>) method.requestCodec(),
                        value, plen);
            } catch (RuntimeException e) { // the codec failed: the writer aborted the claim
                streams.failed(AsyncClientStreamCall.this, new RpcException(Status.HANDLER_FAILED,
                        "a message of " + method.name() + " could not be encoded: " + e, e));
                return GONE;
            }
        }

        @Override
        protected int writeMarker(Object marker) {
            if (flow.isEnded()) {
                return GONE;
            }
            if (marker == OPEN) {
                return streams.writeAsyncOpen(AsyncClientStreamCall.this, openMetadata, openNoDeadline, deadlineNanos);
            }
            return streams.writeAsyncEnd(AsyncClientStreamCall.this);
        }

        @Override
        protected boolean writeGrant(long increment) {
            return streams.writeWindow(AsyncClientStreamCall.this, increment);
        }

        @Override
        protected void awaitRoom() {
            streams.awaitRoom(AsyncClientStreamCall.this);
        }

        @Override
        protected Metadata endMetadata() {
            return endMetadata;
        }

        @Override
        protected void listenerFailed(RuntimeException e) {
            cancel();
        }
    }
}
