package dev.rdmarpc.rpc.core.server;

import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.RpcProvider.Registration.Kind;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.buffer.PooledBuffer;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.MetadataLimits;
import dev.rdmarpc.rpc.core.MetadataReader;
import dev.rdmarpc.rpc.core.StreamMessages;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.IdleTimeoutException;
import dev.rdmarpc.rpc.transport.PeerRefusedException;
import dev.rdmarpc.rpc.transport.ProtocolException;
import dev.rdmarpc.rpc.transport.ResourceExhaustedException;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of one connection: dispatches each request frame by its method's mode, holds the
 * calls that outlive their frame (blocking, asynchronous, streams) until they are over, and stops them
 * at their deadline, a cancel or the close. Inline and raw calls run in its {@link InlineCall}.
 */
final class ServerConnection implements FrameHandler {
    private static final System.Logger LOG = System.getLogger(ServerConnection.class.getName());

    private final ServerCore core;
    final Connection connection;
    /** Writes this connection's responses. */
    final FrameWriter writer;
    private final InetSocketAddress peer;
    /** Blocking and asynchronous calls of this connection not over (the transport's {@link #callsInFlight}). */
    private final AtomicInteger blockingCalls = new AtomicInteger();
    /**
     * The blocking and asynchronous calls of this connection by request id, from dispatch until
     * they are over, so that a cancel or their deadline finds them. (Inline and raw calls end before
     * the next frame is read: a cancel can only arrive after them.)
     */
    private final HeldCalls running = new HeldCalls();
    /** The calls of the last {@link #onTick} or {@link #onClose}, acted on without the table's lock; I/O thread. */
    private HeldCall[] heldNow = new HeldCall[16];
    /** How many times the transport sent something (I/O thread writes), for stream senders waiting for room. */
    private volatile long sendProgress;
    /** Stream senders waiting in {@link #awaitSendProgress}; changed under {@link #sendRoomLock}. */
    private volatile int sendRoomWaiters;
    private final java.util.concurrent.locks.ReentrantLock sendRoomLock = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.locks.Condition sendRoom = sendRoomLock.newCondition();
    /** The context of the inline and raw calls, run one at a time on the I/O thread. */
    private final InlineCall inline;
    /** Reads the metadata of the calls held (a repeated block gives the instance read before); I/O thread. */
    private final MetadataReader metadataReader = new MetadataReader();

    ServerConnection(ServerCore core, Connection connection) {
        this.core = core;
        this.connection = connection;
        this.writer = new FrameWriter(connection);
        this.peer = connection.remoteAddress();
        this.inline = new InlineCall(this);
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
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE || type == FrameDescriptor.TYPE_STREAM_WINDOW) {
            streamFrame(type, frame, offset, length);
            return;
        }
        if (type > FrameDescriptor.TYPE_MAX_KNOWN) {
            unknownType(type, frame, offset);
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
        request(frame, offset, length);
    }

    /** A request arrived: refused here, or dispatched by its method's mode (inline and raw ones run here). */
    private void request(MemorySegment frame, long offset, int length) {
        Counters m = core.metrics;
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
        int mlen = FrameHeader.metadataLength(frame, offset);
        if (mlen != 0) {
            RpcException refused = MetadataLimits.refusal(frame, offset, "request", e.method().name(), "server",
                    core.maxMetadataBytes);
            if (refused != null) {
                ResponseWriter.writeError(writer, core.metrics, id, mid, refused.status(), refused.getMessage());
                return;
            }
        }
        int timeoutField = FrameHeader.timeoutField(frame, offset);
        boolean deadline = timeoutField != 0;
        long due = deadline ? System.nanoTime() + FrameDescriptor.decodeTimeout(timeoutField) : 0;
        boolean stream = (FrameHeader.flags(frame, offset) & FrameDescriptor.FLAG_STREAM) != 0;
        if (stream != (e.mode() == Kind.STREAM)) {
            ResponseWriter.writeError(writer, m, id, mid, Status.PROTOCOL_ERROR, stream
                    ? e.method().name() + " is not a streaming method on this server: call it, do not open a stream"
                    : e.method().name() + " is a streaming method on this server: open a stream, do not call it");
            return;
        }
        if (stream) {
            dispatchStream(e, frame, offset, id, mid, deadline, due, mlen);
            return;
        }
        if (e.mode() == Kind.BLOCKING) {
            dispatchBlocking(e, frame, offset, length, id, mid, deadline, due, mlen);
            return;
        }
        if (e.mode() == Kind.ASYNC) {
            dispatchAsync(e, frame, offset, id, mid, deadline, due, mlen);
            return;
        }
        inline.run(e, frame, offset, length, id, mid, deadline, due, mlen);
    }

    private void dispatchBlocking(MethodRegistry.Entry e, MemorySegment frame, long offset, int length, long id, int mid,
                                  boolean deadline, long due, int mlen) {
        Counters m = core.metrics;
        if (!admit(id, mid)) {
            return;
        }
        PooledBuffer copy = core.pool.acquire(length);
        if (copy == null) {
            core.blockingInFlight.decrementAndGet();
            ResponseWriter.writeError(writer, m, id, mid, Status.RESOURCE_EXHAUSTED, "server buffer pool exhausted");
            return;
        }
        MemorySegment.copy(frame, offset, copy.segment(), 0, length);
        BlockingCall call = new BlockingCall(this, e, copy, length, deadline, due, mlen);
        call.requestBytes = (long) FrameHeader.payloadLength(frame, offset) - mlen + FrameHeader.attachmentLength(frame, offset);
        callStarted(call);
        try {
            core.blockingExecutor.execute(call);
        } catch (RuntimeException ex) { // executor shut down
            copy.release();
            callEnded(call);
            ResponseWriter.writeError(writer, m, id, mid, Status.SHUTTING_DOWN, "server is shutting down");
        }
    }

    /**
     * A frame of a later protocol version's type: answered with an error for its request id, so that
     * a newer client learns at once that this server does not know it; the connection goes on.
     */
    private void unknownType(int type, MemorySegment frame, long offset) {
        long id = FrameHeader.requestId(frame, offset);
        if (id == FrameDescriptor.CONNECTION_REQUEST_ID) {
            return; // that id's responses mean the connection ends: nothing to answer
        }
        ResponseWriter.writeError(writer, core.metrics, id, FrameHeader.methodId(frame, offset), Status.PROTOCOL_ERROR,
                "unknown message type " + type + ": this server knows types 1 to " + FrameDescriptor.TYPE_MAX_KNOWN
                        + " of protocol version " + FrameDescriptor.VERSION);
    }

    /** Starts an asynchronous handler's call on the I/O thread; it ends when its future completes. */
    private void dispatchAsync(MethodRegistry.Entry e, MemorySegment frame, long offset, long id, int mid,
                               boolean deadline, long due, int mlen) {
        Counters m = core.metrics;
        if (!admit(id, mid)) {
            return;
        }
        int plen = FrameHeader.payloadLength(frame, offset) - mlen;
        int alen = FrameHeader.attachmentLength(frame, offset);
        long poff = offset + FrameDescriptor.HEADER_LENGTH + mlen;
        Object request;
        try {
            request = e.method().requestCodec().decode(frame, poff, plen);
        } catch (RuntimeException ex) {
            core.blockingInFlight.decrementAndGet();
            ResponseWriter.writeError(writer, m, id, mid, Status.PROTOCOL_ERROR,
                    "request of " + e.method().name() + " could not be decoded: " + ex.getMessage());
            return;
        }
        AsyncCall call = new AsyncCall(this, e, id, mid, deadline, due,
                mlen == 0 ? Metadata.EMPTY : metadataReader.read(frame, offset + FrameDescriptor.HEADER_LENGTH));
        call.requestBytes = (long) plen + alen;
        callStarted(call);
        call.start(request, frame.asSlice(poff + plen, alen));
    }

    /** Starts a streaming call: its handler on a virtual thread, held until it returns. */
    private void dispatchStream(MethodRegistry.Entry e, MemorySegment frame, long offset, long id, int mid,
                                boolean deadline, long due, int mlen) {
        if (!admit(id, mid)) {
            return;
        }
        Metadata md = mlen == 0 ? Metadata.EMPTY : metadataReader.read(frame, offset + FrameDescriptor.HEADER_LENGTH);
        if (e.stream() instanceof dev.rdmarpc.rpc.AsyncStreamHandler<?, ?>) {
            AsyncServerStreamCall async = new AsyncServerStreamCall(this, e, id, mid, deadline, due, md);
            callStarted(async);
            async.start(); // here, on the I/O thread: no thread of its own
            return;
        }
        ServerStreamCall call = new ServerStreamCall(this, e, id, mid, deadline, due, md);
        callStarted(call);
        call.grantInitial();
        try {
            core.blockingExecutor.execute(call);
        } catch (RuntimeException ex) { // executor shut down
            callEnded(call);
            ResponseWriter.writeError(writer, core.metrics, id, mid, Status.SHUTTING_DOWN, "server is shutting down");
        }
    }

    /** A message or window update of a stream; dropped when the stream is over (answered, cancelled). */
    private void streamFrame(int type, MemorySegment frame, long offset, int length) {
        HeldCall held = running.get(FrameHeader.requestId(frame, offset));
        if (held instanceof AsyncServerStreamCall async) {
            if (type == FrameDescriptor.TYPE_STREAM_MESSAGE) {
                async.onMessage(frame, offset, length);
            } else {
                async.onWindow(StreamMessages.increment(frame, offset));
            }
            return;
        }
        if (!(held instanceof ServerStreamCall call)) {
            return;
        }
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE) {
            call.onMessage(frame, offset, length);
        } else {
            call.onWindow(StreamMessages.increment(frame, offset));
        }
    }

    /** Counts a call that will outlive its frame, or answers OVERLOADED. @return true when admitted */
    private boolean admit(long id, int mid) {
        if (core.blockingInFlight.incrementAndGet() > core.maxInFlight) {
            core.blockingInFlight.decrementAndGet();
            core.metrics.rejected.increment();
            ResponseWriter.writeError(writer, core.metrics, id, mid, Status.OVERLOADED,
                    "server has " + core.maxInFlight + " calls in flight");
            return false;
        }
        return true;
    }

    /** A blocking or asynchronous call was admitted: count it and hold it until {@link #callEnded}. */
    private void callStarted(HeldCall call) {
        countCall();
        running.put(call);
    }

    /** A call outlives its frame (held or deferred): counted in flight, and for the transport's {@link #callsInFlight}. */
    void countCall() {
        core.metrics.inFlight.increment();
        blockingCalls.incrementAndGet();
    }

    /** Such a call is over. */
    void uncountCall() {
        core.metrics.inFlight.decrement();
        blockingCalls.decrementAndGet();
    }

    /** A blocking or asynchronous call is over: forget it, and release what it counted. */
    void callEnded(HeldCall call) {
        running.remove(call);
        uncountCall();
        core.blockingInFlight.decrementAndGet();
    }

    ServerCore core() {
        return core;
    }

    /** @return the client's address */
    InetSocketAddress peer() {
        return peer;
    }

    /** @return the TLS session of the connection, null without TLS */
    javax.net.ssl.SSLSession tlsSession() {
        return connection.tlsSession();
    }

    /** The client gave up on call {@code id}: stop it if it still runs; on the I/O thread. */
    private void cancel(long id) {
        HeldCall call = running.get(id);
        if (call != null) {
            call.stop(false);
        }
    }

    /** Stops the blocking calls whose deadline has passed (the transport times frames and idleness). */
    @Override
    public void onTick(Connection c, long nowNanos) {
        if (!roomWaiters.isEmpty()) {
            wakeRoomWaiters(); // a progress that came between a refused claim and its wait
        }
        if (running.isEmpty()) {
            return;
        }
        HeldCall[] held = heldNow = running.snapshot(heldNow);
        for (int i = 0; held[i] != null; i++) {
            HeldCall call = held[i];
            held[i] = null;
            if (call.hasDeadline && nowNanos - call.deadlineNanos >= 0) {
                call.stop(true);
            }
        }
    }

    /** Blocking calls running: their deadlines are checked on every tick. */
    @Override
    public boolean hasTimedWork() {
        return !running.isEmpty();
    }

    /**
     * Tells the client why before the connection closes: a connection-level error (status
     * RESOURCE_EXHAUSTED when no buffer was free for its frame, SHUTTING_DOWN when it was idle too
     * long, PROTOCOL_ERROR for a bad header or a frame not finished in time, PERMISSION_DENIED when
     * the TLS check of clients refused it, the message saying which), after the responses to every frame received before.
     */
    @Override
    public void onRefused(Connection c, IOException cause) {
        Status status = cause instanceof ResourceExhaustedException ? Status.RESOURCE_EXHAUSTED
                : cause instanceof IdleTimeoutException ? Status.SHUTTING_DOWN
                : cause instanceof PeerRefusedException ? Status.PERMISSION_DENIED : Status.PROTOCOL_ERROR;
        c.closeAfter(ResponseWriter.connectionError(status, cause.getMessage()), cause);
    }

    @Override
    public int callsInFlight() {
        return blockingCalls.get();
    }

    @Override
    public void onSendProgress(Connection c) {
        sendProgress++; // the I/O thread's alone
        if (!roomWaiters.isEmpty()) {
            wakeRoomWaiters();
        }
        if (sendRoomWaiters > 0) {
            sendRoomLock.lock();
            try {
                sendRoom.signalAll();
            } finally {
                sendRoomLock.unlock();
            }
        }
    }

    /** Asynchronous streams waiting for room in the send queue. */
    private final java.util.concurrent.ConcurrentLinkedQueue<AsyncServerStreamCall> roomWaiters =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** {@code s} waits for room in the send queue: told on the transport's next progress (or tick). */
    void awaitRoom(AsyncServerStreamCall s) {
        roomWaiters.add(s);
    }

    private void wakeRoomWaiters() {
        for (int n = roomWaiters.size(); n > 0; n--) {
            AsyncServerStreamCall s = roomWaiters.poll();
            if (s == null) {
                return;
            }
            s.onRoom();
        }
    }

    /** @return the count of sends so far, to pass to {@link #awaitSendProgress} after a refused claim */
    long sendProgress() {
        return sendProgress;
    }

    /**
     * Waits until the transport sent something since {@code seen} (its send queue has room again),
     * at most {@code maxNanos}: for a stream's sender whose claim was refused for a full queue.
     *
     * @throws InterruptedException when the waiting thread is interrupted (its stream was stopped)
     */
    void awaitSendProgress(long seen, long maxNanos) throws InterruptedException {
        sendRoomLock.lock();
        try {
            sendRoomWaiters++;
            long left = maxNanos;
            while (sendProgress == seen && left > 0) {
                left = sendRoom.awaitNanos(left);
            }
        } finally {
            sendRoomWaiters--;
            sendRoomLock.unlock();
        }
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        core.removed(this);
        // Nobody is left to answer: stop the calls still held, as a cancel would (a blocking
        // handler's thread interrupted, an asynchronous one's future cancelled), so that a handler
        // waiting for something that never comes does not keep its place among maxInFlight.
        if (!running.isEmpty()) {
            HeldCall[] held = heldNow = running.snapshot(heldNow);
            for (int i = 0; held[i] != null; i++) {
                HeldCall call = held[i];
                held[i] = null;
                call.stop(false);
            }
        }
        String reason = cause == null ? "server closed the connection"
                : cause instanceof EOFException ? "client closed the connection" : cause.getMessage();
        if (cause instanceof ProtocolException) {
            core.metrics.protocolErrors.increment();
        }
        Events.closed(core.transportName, "server", c.localAddress(), c.remoteAddress(), reason);
        LOG.log(cause == null || cause instanceof EOFException ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "server connection from {0} closed: {1}", c.remoteAddress(), reason);
    }

    /** A deferred call was answered (any thread): it is a spare again. */
    void deferredAnswered(DeferredRawCall d) {
        uncountCall();
        inline.spare(d);
    }
}
