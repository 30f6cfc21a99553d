package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.core.Counters;
import dev.rdmarpc.rpc.core.Events;
import dev.rdmarpc.rpc.core.FrameWriter;
import dev.rdmarpc.rpc.core.MetadataLimits;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.transport.CertificateRefusedException;
import dev.rdmarpc.rpc.transport.Connection;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.io.EOFException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The client side of one connection as its transport sees it, on the connection's I/O thread: the
 * frames that arrive are dispatched to the calls and streams of the {@link CallTable} (a response
 * completes its call, a stream frame goes to its stream), the tick sweeps deadlines, the close fails
 * every call outstanding. Nothing here allocates on the response path.
 */
final class ClientConnection implements FrameHandler {
    private static final System.Logger LOG = System.getLogger(ClientConnection.class.getName());
    /** The code of the former {@code TIMEOUT} status, read as {@link Status#DEADLINE_EXCEEDED} from a frame. */
    private static final int LEGACY_TIMEOUT_CODE = 3;

    private final CallTable table;
    private final SendRoom sendRoom;
    private final ClientStreams streams;
    private final Counters metrics;
    private final String transportName;
    /** Most bytes of metadata a response may carry. */
    private final int maxMetadataBytes;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private volatile Runnable closeListener;
    // I/O-thread scratch
    private final ResponseViewImpl view = new ResponseViewImpl();
    /** Reads the metadata that ends a stream (a repeated block gives the instance read before); I/O thread. */
    private final dev.rdmarpc.rpc.core.MetadataReader metadataReader = new dev.rdmarpc.rpc.core.MetadataReader();
    private final CallTable.Taken taken = new CallTable.Taken();
    private final CallTable.Expired onExpired = this::expired;
    /** The connection {@link #expired} is told for (the one ticking); I/O thread only. */
    private Connection ticking;
    /**
     * Calls the close found with their response target being written (by the NIC): they fail in
     * {@link #onReleased}, once the transport can no longer write it. I/O thread only.
     */
    private final java.util.List<PendingCall> landingAtClose = new java.util.ArrayList<>(0);
    /** What {@link #landingAtClose} fail with. */
    private RpcException landingError;

    ClientConnection(CallTable table, SendRoom sendRoom, ClientStreams streams, Counters metrics, String transportName,
                     int maxMetadataBytes) {
        this.table = table;
        this.sendRoom = sendRoom;
        this.streams = streams;
        this.metrics = metrics;
        this.transportName = transportName;
        this.maxMetadataBytes = maxMetadataBytes;
    }

    /** @param r run once after the connection closed */
    void onClosed(Runnable r) {
        this.closeListener = r;
    }

    /**
     * What a call on the closed connection fails with, once {@link #onClose} has recorded why: the
     * transport refuses claims a moment before it tells the handler (on its I/O thread), and a call
     * that fails in between must still say why (a server's last word, say). Waits up to a second,
     * never on the connection's I/O thread (which is the one to record it).
     */
    RpcException errorOnceClosed(Connection c) {
        if (c != null && !c.inEventLoop()) {
            awaitClosed(1);
        }
        return table.closedErrorNow();
    }

    /** Waits up to {@code seconds} until {@link #onClose} has failed every pending call. */
    void awaitClosed(long seconds) {
        try {
            closedLatch.await(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public int callsInFlight() {
        return table.outstandingHint();
    }

    /** Calls are held (they have deadlines to watch); a racy read is enough, see {@link FrameHandler#hasTimedWork}. */
    @Override
    public boolean hasTimedWork() {
        return table.hasHeld();
    }

    @Override
    public void onSendProgress(Connection c) {
        streams.onRoom();
        sendRoom.onProgress();
    }

    @Override
    public void onFrame(Connection c, MemorySegment buf, long offset, int length) {
        frame(c, buf, offset, length, null);
    }

    @Override
    public void onFrame(Connection c, MemorySegment buf, long offset, int length, MemorySegment landed) {
        frame(c, buf, offset, length, landed);
    }

    /**
     * A successful response to a call that gave a buffer for its response attachment
     * ({@link dev.rdmarpc.rpc.CallOptions#withResponseAttachment}) has the transport write the
     * attachment there, when it can (RDMA rendezvous into registered memory: host memory, or GPU
     * memory registered through the transport's NicRegistrar). From the answer on, the call's
     * deadline and a cancel no longer end it (see {@link PendingCall#cancel}): the transport writes
     * the target until the frame arrives or the connection closes, and the call ends then.
     */
    @Override
    public MemorySegment attachmentSink(Connection c, MemorySegment header, long offset) {
        if (FrameHeader.type(header, offset) != FrameDescriptor.TYPE_RESPONSE
                || FrameHeader.status(header, offset) != FrameDescriptor.STATUS_OK) {
            return null;
        }
        int alen = FrameHeader.attachmentLength(header, offset);
        long id = FrameHeader.requestId(header, offset);
        if (!(table.sink(id) instanceof PendingCall p)) {
            return null;
        }
        Attachment target = p.responseTarget();
        if (target == null || alen > target.length()) {
            return null;
        }
        // from here the call ends with this response (or the connection's close), never earlier
        return table.startLanding(id) != null ? FrameWriter.nicView(target) : null;
    }

    /** A frame arrived; {@code landed}: its attachment, already in the call's response target, or null. */
    private void frame(Connection c, MemorySegment buf, long offset, int length, MemorySegment landed) {
        int type = FrameHeader.type(buf, offset);
        if (type > FrameDescriptor.TYPE_MAX_KNOWN) {
            LOG.log(System.Logger.Level.DEBUG, "ignoring a frame of unknown message type {0} from {1}", type,
                    c.remoteAddress());
            return; // a later version's: nothing here depends on it
        }
        if (type == FrameDescriptor.TYPE_STREAM_MESSAGE || type == FrameDescriptor.TYPE_STREAM_WINDOW) {
            streams.onFrame(type, buf, offset, length);
            return;
        }
        if (type != FrameDescriptor.TYPE_RESPONSE) {
            String why = type == FrameDescriptor.TYPE_CANCEL ? "server sent a cancel frame" : "server sent a request frame";
            LOG.log(System.Logger.Level.WARNING, "closing connection to {0}: {1}", c.remoteAddress(), why);
            c.close(new ProtocolException(why));
            return;
        }
        metrics.bytesReceived.add(length);
        long id = FrameHeader.requestId(buf, offset);
        if (id == FrameDescriptor.CONNECTION_REQUEST_ID) {
            connectionError(c, buf, offset);
            return;
        }
        long now = System.nanoTime();
        CallTable.Taken t = taken;
        if (!table.take(id, now, t)) {
            return; // a late response to a call that timed out
        }
        Object sink = t.sink;
        t.sink = null;
        if (t.inPlace) {
            FrameWriter.detachInPlace(c, id); // a response before the whole request was written: only a broken server
        }
        table.touch(now);
        int statusCode = FrameHeader.status(buf, offset);
        RpcException badMetadata = FrameHeader.metadataLength(buf, offset) == 0 ? null
                : MetadataLimits.refusal(buf, offset, "response", t.method.name(), "client", maxMetadataBytes);
        if (badMetadata != null || statusCode != FrameDescriptor.STATUS_OK) {
            failed(c, sink, t, badMetadata != null ? badMetadata : errorFrom(buf, offset, statusCode), now, length);
        } else {
            succeeded(c, sink, t, buf, offset, length, landed, now);
        }
    }

    /** Call {@code t} was answered with an error (or a response whose metadata it refuses). */
    private void failed(Connection c, Object sink, CallTable.Taken t, RpcException error, long now, int length) {
        Method<?, ?> method = t.method;
        long start = t.start;
        int requestBytes = t.requestBytes;
        if (t.pastDeadline) {
            // the server gave up at the deadline it was sent, or a call the handler made timed out
            // with it: either way this call's deadline passed, as the sweep would say
            metrics.timeouts.increment();
            error = new RpcException(Status.DEADLINE_EXCEEDED, method.name() + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(now - start) + " ms (the server said: " + error.status() + " "
                    + error.getMessage() + ")");
        }
        metrics.errors.increment();
        if (sink instanceof ClientStreamSink s) {
            s.ended(error, Metadata.EMPTY); // after the messages that came before it
        } else {
            fail(sink, t.tag, error);
        }
        if (Events.clientCallEnabled()) {
            Events.clientCall(method.name(), method.id(), c.remoteAddress(), error.status().name(), now - start,
                    requestBytes, length);
        }
    }

    /** Call {@code t} was answered with a response whose metadata was checked. */
    private void succeeded(Connection c, Object sink, CallTable.Taken t, MemorySegment buf, long offset, int length,
                           MemorySegment landed, long now) {
        Method<?, ?> method = t.method; // read before the sink runs: it may start another call here
        long start = t.start;
        int requestBytes = t.requestBytes;
        if (sink instanceof ResponseListener l) {
            try {
                l.onResponse(t.tag, view.wrap(buf, offset));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "response listener threw", e);
            } finally {
                view.clear();
            }
        } else if (sink instanceof ClientStreamSink s) {
            int mlen = FrameHeader.metadataLength(buf, offset); // checked by the caller
            s.ended(null, mlen == 0 ? Metadata.EMPTY : metadataReader.read(buf, offset + FrameDescriptor.HEADER_LENGTH));
        } else {
            ((PendingCall) sink).completeFrom(buf, offset, metrics, landed != null);
        }
        if (Events.clientCallEnabled()) {
            Events.clientCall(method.name(), method.id(), c.remoteAddress(), Status.OK.name(), now - start,
                    requestBytes, length);
        }
    }

    /** The server says why it closes the connection: close it now, failing the calls outstanding with its status. */
    private void connectionError(Connection c, MemorySegment buf, long offset) {
        int statusCode = FrameHeader.status(buf, offset);
        RpcException error = statusCode == FrameDescriptor.STATUS_OK
                ? new RpcException(Status.PROTOCOL_ERROR, "server sent a successful response to request id 0")
                : FrameHeader.metadataLength(buf, offset) != 0
                ? new RpcException(Status.PROTOCOL_ERROR, "server sent a connection-level error with metadata")
                : errorFrom(buf, offset, statusCode);
        c.close(error);
    }

    /** An error response's status and message, and its metadata (checked, or a connection-level error's: none). */
    private static RpcException errorFrom(MemorySegment buf, long offset, int statusCode) {
        // code 3 (TIMEOUT) never travelled, but a peer that sends it means a deadline: read it so
        Status status = statusCode == LEGACY_TIMEOUT_CODE ? Status.DEADLINE_EXCEEDED : Status.fromCode(statusCode);
        int mlen = FrameHeader.metadataLength(buf, offset);
        int plen = FrameHeader.payloadLength(buf, offset) - mlen;
        String message;
        try {
            message = Codecs.STRING.decode(buf, offset + FrameDescriptor.HEADER_LENGTH + mlen, plen);
        } catch (RuntimeException e) {
            message = "(undecodable error message)";
        }
        if (status == null || status == Status.OK || !status.isWire()) {
            return new RpcException(Status.PROTOCOL_ERROR, "server sent unknown status code " + statusCode + ": " + message);
        }
        RpcException e = new RpcException(status, message);
        return mlen == 0 ? e : e.withMetadata(Metadata.readFrom(buf, offset + FrameDescriptor.HEADER_LENGTH));
    }

    private static void fail(Object sink, long tag, RpcException error) {
        if (sink instanceof ResponseListener l) {
            try {
                l.onError(tag, error);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "response listener threw", e);
            }
        } else if (sink instanceof PendingCall p) {
            p.completeExceptionally(error);
        } else if (sink instanceof ClientStreamSink s) {
            s.failed(error);
        }
    }

    @Override
    public void onTick(Connection c, long nowNanos) {
        streams.onRoom(); // a progress that came between a refused claim and its wait
        ticking = c;
        try {
            table.sweep(nowNanos, onExpired);
        } finally {
            ticking = null;
        }
    }

    /** The sweep freed a call whose deadline passed: it fails with DEADLINE_EXCEEDED. */
    private void expired(Object sink, long tag, Method<?, ?> m, long elapsedNanos, long inPlaceId) {
        Connection c = ticking;
        if (inPlaceId != 0) {
            FrameWriter.detachInPlace(c, inPlaceId); // the caller may reuse the payload once it hears
        }
        metrics.timeouts.increment();
        metrics.errors.increment();
        fail(sink, tag, new RpcException(Status.DEADLINE_EXCEEDED,
                m.name() + " timed out after " + TimeUnit.NANOSECONDS.toMillis(elapsedNanos) + " ms"));
        if (Events.clientCallEnabled()) {
            Events.clientCall(m.name(), m.id(), c.remoteAddress(), Status.DEADLINE_EXCEEDED.name(), elapsedNanos, 0, 0);
        }
    }

    /** After the close: the calls held back by it fail now, their targets no longer written (I/O thread). */
    @Override
    public void onReleased(Connection c) {
        for (PendingCall p : landingAtClose) {
            metrics.errors.increment();
            RpcException e = landingError;
            p.completeExceptionally(new RpcException(e.status(), e.getMessage()));
        }
        landingAtClose.clear();
    }

    @Override
    public void onClose(Connection c, Throwable cause) {
        String reason;
        Status status = Status.CONNECTION_CLOSED;
        if (cause == null) {
            reason = "client closed the connection";
        } else if (cause instanceof RpcException serverSaid) {
            reason = "server closed the connection: " + serverSaid.getMessage();
            status = serverSaid.status();
        } else if (cause instanceof EOFException) {
            reason = "server closed the connection";
        } else if (cause instanceof CertificateRefusedException refused) {
            // the server refused this client's TLS certificate after the connect's wait for its verdict:
            // the same status as a refusal within that wait (the connect's), and every later call's
            reason = refused.getMessage();
            status = Status.UNAUTHENTICATED;
        } else {
            reason = "connection failed: " + cause.getMessage();
        }
        if (cause instanceof ProtocolException) {
            metrics.protocolErrors.increment();
        }
        CallTable.Pending pending = table.closeAll(status, reason);
        sendRoom.onClose();
        metrics.connectionsClosed.increment();
        Object[] sinks = pending.sinks();
        for (int i = 0; i < sinks.length; i++) {
            if (sinks[i] instanceof PendingCall p && p.landing()) {
                // the NIC may still be writing its target: it fails once the transport released it
                landingAtClose.add(p);
                landingError = new RpcException(status, reason);
                continue;
            }
            metrics.errors.increment();
            fail(sinks[i], pending.tags()[i], new RpcException(status, reason));
        }
        Events.closed(transportName, "client", c.localAddress(), c.remoteAddress(), reason);
        LOG.log(cause == null || cause instanceof EOFException ? System.Logger.Level.DEBUG : System.Logger.Level.INFO,
                "client connection {0} -> {1} closed: {2}", c.localAddress(), c.remoteAddress(), reason);
        closedLatch.countDown();
        Runnable r = closeListener;
        if (r != null) {
            r.run();
        }
    }
}
