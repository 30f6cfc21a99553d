package dev.rdmarpc.rpc.core;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.CallContext;
import dev.rdmarpc.rpc.Handler;
import dev.rdmarpc.rpc.RawCall;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.IOException;
import java.io.EOFException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of one connection: dispatches each request frame. It is also the reusable
 * {@link RawCall} / {@link CallContext} flyweight of inline handlers (I/O thread only).
 */
final class ServerConnection implements FrameHandler, RawCall {
    private static final System.Logger LOG = System.getLogger(ServerConnection.class.getName());

    private final ServerCore core;
    final Connection connection;
    /** Writes this connection's responses. */
    final FrameWriter writer;
    private final InetSocketAddress peer;
    /** Blocking calls of this connection still running (the transport's {@link #callsInFlight}). */
    private final AtomicInteger blockingCalls = new AtomicInteger();
    /**
     * The blocking calls of this connection by request id, from dispatch until their response is
     * written, so that a cancel finds them. (Inline and raw calls end before the next frame is read:
     * a cancel can only arrive after them.)
     */
    private final ConcurrentHashMap<Long, BlockingCall> running = new ConcurrentHashMap<>();

    // current inline call (I/O thread)
    private MemorySegment buf;
    private long frameOffset;
    private long requestId;
    private int methodId;
    private int payloadLength;
    private int attachmentLength;
    private boolean responded;
    private Attachment responseAttachment = Attachment.NONE;

    ServerConnection(ServerCore core, Connection connection) {
        this.core = core;
        this.connection = connection;
        this.writer = new FrameWriter(connection);
        this.peer = connection.remoteAddress();
    }

    @Override
    public void onFrame(Connection c, MemorySegment frame, long offset, int length) {
        Counters m = core.metrics;
        m.bytesReceived.add(length);
        int type = FrameHeader.type(frame, offset);
        if (type == FrameDescriptor.TYPE_CANCEL) {
            cancel(FrameHeader.requestId(frame, offset));
            return;
        }
        if (type != FrameDescriptor.TYPE_REQUEST) {
            String why = type == FrameDescriptor.TYPE_RDMA_HELLO
                    ? "client asked for RDMA but this server was started without rdma()"
                    : "client sent a response frame";
            LOG.log(System.Logger.Level.WARNING, "closing connection from {0}: {1}", peer, why);
            c.close(new ProtocolException(why));
            return;
        }
        m.calls.increment();
        long id = FrameHeader.requestId(frame, offset);
        int mid = FrameHeader.methodId(frame, offset);
        if (core.shuttingDown) {
            ResponseWriter.writeError(writer, m, id, mid, Status.SHUTTING_DOWN, "server is shutting down");
            return;
        }
        MethodRegistry.Entry e = core.registry.get(mid);
        if (e == null) {
            ResponseWriter.writeError(writer, m, id, mid, Status.UNKNOWN_METHOD, "no method with id 0x" + Integer.toHexString(mid));
            return;
        }
        if (e.mode() == MethodRegistry.Mode.BLOCKING) {
            dispatchBlocking(e, frame, offset, length, id, mid);
            return;
        }
        boolean timed = Events.serverCallEnabled();
        long start = timed ? System.nanoTime() : 0;
        buf = frame;
        frameOffset = offset;
        requestId = id;
        methodId = mid;
        payloadLength = FrameHeader.payloadLength(frame, offset);
        attachmentLength = FrameHeader.attachmentLength(frame, offset);
        responded = false;
        responseAttachment = Attachment.NONE;
        Status status;
        try {
            status = e.mode() == MethodRegistry.Mode.RAW ? runRaw(e) : runInline(e);
        } finally {
            buf = null;
            responseAttachment = Attachment.NONE;
        }
        if (timed) {
            Events.serverCall(e.method().name(), mid, peer, status.name(), System.nanoTime() - start, length, e.mode().name());
        }
    }

    private Status runRaw(MethodRegistry.Entry e) {
        try {
            e.raw().handle(this);
        } catch (Throwable t) {
            if (!responded) {
                responded = true;
                return ResponseWriter.writeError(writer, core.metrics, requestId, methodId,
                        ResponseWriter.statusOf(t), ResponseWriter.messageOf(t));
            }
            LOG.log(System.Logger.Level.WARNING, "raw handler of " + e.method().name() + " threw after responding", t);
            return Status.OK;
        }
        if (!responded) {
            responded = true;
            return ResponseWriter.writeError(writer, core.metrics, requestId, methodId, Status.HANDLER_FAILED,
                    "handler of " + e.method().name() + " returned without responding");
        }
        return lastStatus;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Status runInline(MethodRegistry.Entry e) {
        Object request;
        try {
            request = e.method().requestCodec().decode(buf, payloadOffset(), payloadLength);
        } catch (RuntimeException ex) {
            return ResponseWriter.writeError(writer, core.metrics, requestId, methodId, Status.PROTOCOL_ERROR,
                    "request of " + e.method().name() + " could not be decoded: " + ex.getMessage());
        }
        Object response;
        try {
            response = ((Handler) e.handler()).handle(this, request);
        } catch (Throwable t) {
            return ResponseWriter.writeError(writer, core.metrics, requestId, methodId,
                    ResponseWriter.statusOf(t), ResponseWriter.messageOf(t));
        }
        return ResponseWriter.writeValue(writer, core.maxFrameLength, core.metrics, requestId, methodId,
                e.method().responseCodec(), response, responseAttachment);
    }

    private void dispatchBlocking(MethodRegistry.Entry e, MemorySegment frame, long offset, int length, long id, int mid) {
        Counters m = core.metrics;
        if (core.blockingInFlight.incrementAndGet() > core.maxInFlight) {
            core.blockingInFlight.decrementAndGet();
            m.rejected.increment();
            ResponseWriter.writeError(writer, m, id, mid, Status.OVERLOADED,
                    "server has " + core.maxInFlight + " calls in flight");
            return;
        }
        PooledBuffer copy = core.pool.acquire(length);
        if (copy == null) {
            core.blockingInFlight.decrementAndGet();
            ResponseWriter.writeError(writer, m, id, mid, Status.RESOURCE_EXHAUSTED, "server buffer pool exhausted");
            return;
        }
        MemorySegment.copy(frame, offset, copy.segment(), 0, length);
        m.inFlight.increment();
        blockingCalls.incrementAndGet();
        BlockingCall call = new BlockingCall(e, copy, length);
        running.put(id, call);
        try {
            core.blockingExecutor.execute(call);
        } catch (RuntimeException ex) { // executor shut down
            running.remove(id, call);
            copy.release();
            m.inFlight.decrement();
            blockingCalls.decrementAndGet();
            core.blockingInFlight.decrementAndGet();
            ResponseWriter.writeError(writer, m, id, mid, Status.SHUTTING_DOWN, "server is shutting down");
        }
    }

    /** The client gave up on call {@code id}: stop it if it still runs; on the I/O thread. */
    private void cancel(long id) {
        BlockingCall call = running.get(id);
        if (call != null) {
            call.cancel();
        }
    }

    @Override
    public void onTick(Connection c, long nowNanos) {
        // nothing time-driven here: the transport times frames and idleness
    }

    @Override
    public boolean hasTimedWork() {
        return false;
    }

    /**
     * Tells the client why before the connection closes: a connection-level error (status
     * RESOURCE_EXHAUSTED when no buffer was free for its frame, SHUTTING_DOWN when it was idle too
     * long, PROTOCOL_ERROR for a bad header or a frame not finished in time, the message saying
     * which), after the responses to every frame received before.
     */
    @Override
    public void onRefused(Connection c, IOException cause) {
        Status status = cause instanceof ResourceExhaustedException ? Status.RESOURCE_EXHAUSTED
                : cause instanceof IdleTimeoutException ? Status.SHUTTING_DOWN : Status.PROTOCOL_ERROR;
        c.closeAfter(ResponseWriter.connectionError(status, cause.getMessage()), cause);
    }

    @Override
    public int callsInFlight() {
        return blockingCalls.get();
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        core.removed(this);
        String reason = cause == null ? "server closed the connection"
                : cause instanceof EOFException ? "client closed the connection" : cause.getMessage();
        if (cause instanceof ProtocolException) {
            core.metrics.protocolErrors.increment();
        }
        Events.closed(core.transportName, "server", c.localAddress(), c.remoteAddress(), reason);
        LOG.log(cause == null || cause instanceof EOFException ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "server connection from {0} closed: {1}", c.remoteAddress(), reason);
    }

    // ============================================================ RawCall / CallContext (inline)

    private Status lastStatus = Status.OK;

    @Override
    public InetSocketAddress peer() {
        return peer;
    }

    @Override
    public int methodId() {
        return methodId;
    }

    @Override
    public long requestId() {
        return requestId;
    }

    @Override
    public Attachment requestAttachment() {
        return attachmentLength == 0 ? Attachment.NONE : Attachment.of(buf.asSlice(attachmentOffset(), attachmentLength));
    }

    @Override
    public void responseAttachment(Attachment attachment) {
        Objects.requireNonNull(attachment, "attachment");
        DeviceAttachments.validate(attachment);
        this.responseAttachment = attachment;
    }

    @Override
    public MemorySegment buffer() {
        return buf;
    }

    @Override
    public long payloadOffset() {
        return frameOffset + FrameDescriptor.HEADER_LENGTH;
    }

    @Override
    public int payloadLength() {
        return payloadLength;
    }

    @Override
    public long attachmentOffset() {
        return frameOffset + FrameDescriptor.HEADER_LENGTH + payloadLength;
    }

    @Override
    public int attachmentLength() {
        return attachmentLength;
    }

    @Override
    public MemorySegment payload() {
        return buf.asSlice(payloadOffset(), payloadLength);
    }

    private void checkRespond() {
        if (buf == null) {
            throw new IllegalStateException("the call is over: respond only inside the raw handler");
        }
        if (responded) {
            throw new IllegalStateException("already responded");
        }
        responded = true;
    }

    @Override
    public void respond(MemorySegment src, long offset, int length) {
        checkRespond();
        lastStatus = ResponseWriter.writeBytes(writer, core.maxFrameLength, core.metrics, requestId, methodId, src,
                offset, length, responseAttachment);
    }

    @Override
    public <T> void respond(Codec<T> codec, T value) {
        checkRespond();
        lastStatus = ResponseWriter.writeValue(writer, core.maxFrameLength, core.metrics, requestId, methodId, codec,
                value, responseAttachment);
    }

    @Override
    public void respondError(Status status, String message) {
        if (status == Status.OK || !status.isWire()) {
            throw new IllegalArgumentException("not an error status that can be sent: " + status);
        }
        checkRespond();
        lastStatus = ResponseWriter.writeError(writer, core.metrics, requestId, methodId, status, message);
    }

    @Override
    public boolean responded() {
        return responded;
    }

    private static void runListener(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cancel listener threw", e);
        }
    }

    // ============================================================ blocking calls

    /** A request copied out of the receive buffer, handled on a virtual thread. */
    private final class BlockingCall implements Runnable, CallContext {
        private final MethodRegistry.Entry entry;
        private final PooledBuffer frame;
        private final int length;
        private final long id;
        private final int mid;
        private Attachment response = Attachment.NONE;
        // guarded by this: the handler's thread while it runs (interrupted by a cancel), the cancel itself
        private Thread runner;
        private boolean handlerDone;
        private volatile boolean cancelled;
        private List<Runnable> cancelListeners;

        BlockingCall(MethodRegistry.Entry entry, PooledBuffer frame, int length) {
            this.entry = entry;
            this.frame = frame;
            this.length = length;
            this.id = FrameHeader.requestId(frame.segment(), 0);
            this.mid = FrameHeader.methodId(frame.segment(), 0);
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void run() {
            boolean timed = Events.serverCallEnabled();
            long start = timed ? System.nanoTime() : 0;
            Status status;
            Counters m = core.metrics;
            synchronized (this) {
                runner = Thread.currentThread();
            }
            try {
                MemorySegment seg = frame.segment();
                int plen = FrameHeader.payloadLength(seg, 0);
                Object request = null;
                boolean decoded = false;
                try {
                    request = entry.method().requestCodec().decode(seg, FrameDescriptor.HEADER_LENGTH, plen);
                    decoded = true;
                } catch (RuntimeException ex) {
                    status = ResponseWriter.writeError(writer, m, id, mid, Status.PROTOCOL_ERROR,
                            "request of " + entry.method().name() + " could not be decoded: " + ex.getMessage());
                }
                if (decoded) {
                    Object resp = null;
                    Throwable failure = null;
                    if (!cancelled) {
                        try {
                            resp = ((Handler) entry.handler()).handle(this, request);
                        } catch (Throwable t) {
                            failure = t;
                        }
                    }
                    status = handlerReturned() ? Status.CANCELLED // the client forgot the call: no response
                            : failure != null
                            ? ResponseWriter.writeError(writer, m, id, mid, ResponseWriter.statusOf(failure),
                                    ResponseWriter.messageOf(failure))
                            : ResponseWriter.writeValue(writer, core.maxFrameLength, m, id, mid,
                                    entry.method().responseCodec(), resp, response);
                } else {
                    status = Status.PROTOCOL_ERROR;
                }
            } finally {
                handlerReturned();
                running.remove(id, this);
                frame.release();
                m.inFlight.decrement();
                blockingCalls.decrementAndGet();
                core.blockingInFlight.decrementAndGet();
            }
            if (timed) {
                Events.serverCall(entry.method().name(), mid, peer, status.name(), System.nanoTime() - start, length, "BLOCKING");
            }
        }

        /**
         * The handler is over (returned, threw, or never ran): no cancel interrupts this thread from now
         * on, and an interrupt a cancel left is cleared, so that writing the response is not cut short.
         *
         * @return true when the call was cancelled
         */
        private synchronized boolean handlerReturned() {
            if (!handlerDone) {
                handlerDone = true;
                runner = null;
                if (cancelled) {
                    Thread.interrupted();
                }
            }
            return cancelled;
        }

        /** The client cancelled: interrupt the handler if it runs, then tell the listeners; on the I/O thread. */
        void cancel() {
            List<Runnable> listeners;
            synchronized (this) {
                if (cancelled || handlerDone) {
                    return;
                }
                cancelled = true;
                if (runner != null) {
                    runner.interrupt();
                }
                listeners = cancelListeners;
                cancelListeners = null;
            }
            core.metrics.cancelled.increment();
            if (listeners != null) {
                for (Runnable r : listeners) {
                    runListener(r);
                }
            }
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public void onCancel(Runnable listener) {
            Objects.requireNonNull(listener, "listener");
            synchronized (this) {
                if (!cancelled) {
                    if (cancelListeners == null) {
                        cancelListeners = new ArrayList<>(2);
                    }
                    cancelListeners.add(listener);
                    return;
                }
            }
            runListener(listener); // cancelled already: at once, on this thread
        }

        @Override
        public InetSocketAddress peer() {
            return peer;
        }

        @Override
        public int methodId() {
            return mid;
        }

        @Override
        public long requestId() {
            return id;
        }

        @Override
        public Attachment requestAttachment() {
            MemorySegment seg = frame.segment();
            int plen = FrameHeader.payloadLength(seg, 0);
            int alen = FrameHeader.attachmentLength(seg, 0);
            return alen == 0 ? Attachment.NONE : Attachment.of(seg.asSlice(FrameDescriptor.HEADER_LENGTH + plen, alen));
        }

        @Override
        public void responseAttachment(Attachment attachment) {
            Objects.requireNonNull(attachment, "attachment");
            DeviceAttachments.validate(attachment);
            this.response = attachment;
        }
    }
}
