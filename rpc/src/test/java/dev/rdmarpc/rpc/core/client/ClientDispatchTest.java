package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.core.Counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.ClientStream;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.ResponseListener;
import dev.rdmarpc.rpc.ResponseView;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeader;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.protocol.MetadataBlock;
import dev.rdmarpc.rpc.transport.FrameHandler;
import dev.rdmarpc.rpc.transport.ProtocolException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The client connection's frame dispatch without a socket: frames are fed to its
 * {@link ClientCore#frameHandler} by hand, and what the client writes lands in an in-memory
 * connection.
 */
class ClientDispatchTest {
    private static final Method<Integer, Integer> ECHO = Method.of("echo", Codecs.INT, Codecs.INT);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final Counters metrics = new Counters();
    private final MemoryConnection c = new MemoryConnection();
    private final ClientCore core = new ClientCore(metrics, 16, FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH, SECOND,
            8 << 20, "memory", MetadataBlock.DEFAULT_MAX_BYTES, List.of());

    {
        c.handler = core.frameHandler();
        core.attach(c);
    }

    /** A frame from the server: header and a payload of {@code payload}'s bytes. */
    private static MemorySegment frame(int type, long id, int status, int flags, MemorySegment payload) {
        int plen = (int) payload.byteSize();
        MemorySegment f = Arena.ofAuto().allocate(FrameDescriptor.HEADER_LENGTH + plen);
        new FrameHeaderEncoder().wrap(f, 0).type(type).requestId(id).methodId(ECHO.id()).status(status).flags(flags)
                .payloadLength(plen).attachmentLength(0);
        MemorySegment.copy(payload, 0, f, FrameDescriptor.HEADER_LENGTH, plen);
        return f;
    }

    private static MemorySegment intPayload(int v) {
        MemorySegment p = Arena.ofAuto().allocate(4);
        Codecs.INT.encode(v, p, 0);
        return p;
    }

    private static MemorySegment stringPayload(String s) {
        MemorySegment p = Arena.ofAuto().allocate(Codecs.STRING.encodedSize(s));
        Codecs.STRING.encode(s, p, 0);
        return p;
    }

    private void feed(MemorySegment f) {
        core.frameHandler().onFrame(c, f, 0, (int) f.byteSize());
    }

    private PendingCall call(long timeoutNanos) {
        return core.start(ECHO, 5, Attachment.NONE, null, timeoutNanos, CallKind.CALL_ASYNC, Metadata.EMPTY);
    }

    private static RpcException failure(PendingCall call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(RpcException.class, e.getCause());
    }

    @Test
    void aResponseCompletesItsCallOnceAndALateCopyIsDropped() throws Exception {
        PendingCall call = call(0);
        long id = c.lastId();
        assertEquals(FrameDescriptor.TYPE_REQUEST, FrameHeader.type(c.last(), 0));
        assertEquals(1, core.outstanding());
        MemorySegment response = frame(FrameDescriptor.TYPE_RESPONSE, id, FrameDescriptor.STATUS_OK, 0, intPayload(42));
        feed(response);
        assertEquals(42, call.get(5, TimeUnit.SECONDS));
        assertEquals(0, core.outstanding());
        PendingCall next = call(0); // takes the same slot, with a new id
        feed(response);
        assertFalse(next.isDone(), "the first call's response is not the second's");
        feed(frame(FrameDescriptor.TYPE_RESPONSE, c.lastId(), FrameDescriptor.STATUS_OK, 0, intPayload(7)));
        assertEquals(7, next.get(5, TimeUnit.SECONDS));
        assertEquals(3 * response.byteSize(), metrics.bytesReceived(), "the late copy was read, then dropped");
    }

    @Test
    void anErrorResponseFailsTheCallWithTheServersStatusAndMessage() {
        PendingCall call = call(0);
        feed(frame(FrameDescriptor.TYPE_RESPONSE, c.lastId(), Status.HANDLER_FAILED.code(), 0, stringPayload("no such key")));
        RpcException e = failure(call);
        assertEquals(Status.HANDLER_FAILED, e.status());
        assertEquals("no such key", e.getMessage());
        assertEquals(1, metrics.errors());
    }

    @Test
    void anErrorAnsweredAfterTheDeadlineIsTheDeadlines() throws Exception {
        PendingCall call = call(TimeUnit.MILLISECONDS.toNanos(1));
        long id = c.lastId();
        Thread.sleep(5);
        feed(frame(FrameDescriptor.TYPE_RESPONSE, id, Status.SHUTTING_DOWN.code(), 0, stringPayload("gave up")));
        RpcException e = failure(call);
        assertEquals(Status.DEADLINE_EXCEEDED, e.status());
        assertTrue(e.getMessage().contains("the server said: SHUTTING_DOWN gave up"), e.getMessage());
        assertEquals(1, metrics.timeouts());
    }

    @Test
    void theTickFailsTheCallsPastTheirDeadlineAndTellsAListenerItsTag() {
        List<String> heard = new ArrayList<>();
        ResponseListener listener = new ResponseListener() {
            @Override
            public void onResponse(long tag, ResponseView response) {
                heard.add("response " + tag);
            }

            @Override
            public void onError(long tag, RpcException error) {
                heard.add("error " + tag + " " + error.status());
            }
        };
        assertTrue(core.send(ECHO, intPayload(1), Metadata.EMPTY, MemorySegment.NULL, SECOND, listener, 77));
        PendingCall later = call(10 * SECOND);
        FrameHandler h = core.frameHandler();
        assertTrue(h.hasTimedWork());
        h.onTick(c, System.nanoTime());
        assertTrue(heard.isEmpty(), "not yet due");
        h.onTick(c, System.nanoTime() + 2 * SECOND);
        assertEquals(List.of("error 77 DEADLINE_EXCEEDED"), heard);
        assertFalse(later.isDone());
        assertEquals(1, core.outstanding());
        assertEquals(1, metrics.timeouts());
    }

    @Test
    void streamFramesGoToTheirStreamAndABadWindowEndsItWithACancel() {
        ClientStream<Integer, Integer> s = core.openStream(ECHO, 0, Metadata.EMPTY);
        MemorySegment opening = c.written.get(0);
        long id = FrameHeader.requestId(opening, 0);
        assertTrue((FrameHeader.flags(opening, 0) & FrameDescriptor.FLAG_STREAM) != 0, "the opening request");
        feed(frame(FrameDescriptor.TYPE_STREAM_MESSAGE, id, 0, 0, intPayload(9)));
        assertEquals(9, s.receive());
        feed(frame(FrameDescriptor.TYPE_STREAM_WINDOW, id, 0, 0, intPayload(0)));
        RpcException e = assertThrows(RpcException.class, s::receive);
        assertEquals(Status.PROTOCOL_ERROR, e.status());
        assertEquals(FrameDescriptor.TYPE_CANCEL, FrameHeader.type(c.last(), 0), "the server is told");
        assertEquals(id, c.lastId());
        assertEquals(0, core.outstanding());
        int written = c.written.size();
        feed(frame(FrameDescriptor.TYPE_STREAM_MESSAGE, id, 0, 0, intPayload(10))); // late: dropped
        assertEquals(written, c.written.size());
    }

    @Test
    void aStreamEndsWithTheServersResponse() {
        ClientStream<Integer, Integer> s = core.openStream(ECHO, 0, Metadata.EMPTY);
        long id = FrameHeader.requestId(c.written.get(0), 0);
        feed(frame(FrameDescriptor.TYPE_RESPONSE, id, FrameDescriptor.STATUS_OK, 0, MemorySegment.NULL));
        assertNull(s.receive(), "the end");
        assertTrue(s.isDone());
    }

    @Test
    void framesOfAnUnknownTypeAreIgnoredAndARequestFromTheServerClosesTheConnection() {
        PendingCall call = call(0);
        feed(frame(FrameDescriptor.TYPE_MAX_KNOWN + 1, c.lastId(), 0, 0, MemorySegment.NULL));
        assertTrue(c.open);
        assertFalse(call.isDone());
        feed(frame(FrameDescriptor.TYPE_REQUEST, 1, 0, 0, MemorySegment.NULL));
        assertInstanceOf(ProtocolException.class, c.closedWith);
        assertEquals(Status.CONNECTION_CLOSED, failure(call).status());
        assertEquals(1, metrics.protocolErrors());
    }

    @Test
    void aConnectionLevelErrorClosesWithTheServersStatusForEveryCallAndLaterOnes() {
        PendingCall a = call(0);
        PendingCall b = call(0);
        feed(frame(FrameDescriptor.TYPE_RESPONSE, FrameDescriptor.CONNECTION_REQUEST_ID, Status.PERMISSION_DENIED.code(),
                0, stringPayload("client certificate refused")));
        for (PendingCall p : List.of(a, b)) {
            RpcException e = failure(p);
            assertEquals(Status.PERMISSION_DENIED, e.status());
            assertEquals("server closed the connection: client certificate refused", e.getMessage());
        }
        assertFalse(core.isOpen());
        RpcException later = assertThrows(RpcException.class, () -> call(0));
        assertEquals(Status.PERMISSION_DENIED, later.status(), "every later call would be refused too");
        assertEquals(1, metrics.connectionsClosed());
    }

    @Test
    void aCancelFreesTheSlotAtOnceAndTellsTheServer() {
        PendingCall call = call(0);
        long id = c.lastId();
        assertTrue(call.cancel(true));
        assertEquals(0, core.outstanding());
        assertEquals(FrameDescriptor.TYPE_CANCEL, FrameHeader.type(c.last(), 0));
        assertEquals(id, c.lastId());
        assertEquals(1, metrics.cancelled());
        feed(frame(FrameDescriptor.TYPE_RESPONSE, id, FrameDescriptor.STATUS_OK, 0, intPayload(1))); // late: dropped
        assertTrue(call.isCancelled());
    }
}
