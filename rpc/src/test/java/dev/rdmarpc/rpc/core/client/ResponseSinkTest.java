package dev.rdmarpc.rpc.core.client;

import dev.rdmarpc.rpc.core.Counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.rpc.Attachment;
import dev.rdmarpc.rpc.Metadata;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.Reply;
import dev.rdmarpc.rpc.RpcException;
import dev.rdmarpc.rpc.Status;
import dev.rdmarpc.rpc.codec.Codecs;
import dev.rdmarpc.rpc.protocol.FrameDescriptor;
import dev.rdmarpc.rpc.protocol.FrameHeaderEncoder;
import dev.rdmarpc.rpc.protocol.MetadataBlock;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The client's side of response attachments written by the transport into the caller's target
 * ({@link ClientConnection#attachmentSink}, then the frame without its attachment), without a device: which
 * responses get the target, that the reply's attachment is the target and nothing is read past the
 * frame's head, that a call that ended before its response no longer names a target and ignores
 * the frame, and that once the target is being written a cancel or the deadline does not end the
 * call before its response (the target is never written after the call ended).
 */
class ResponseSinkTest {
    private static final Method<Integer, Long> GET = Method.of("get", Codecs.INT, Codecs.LONG);

    private final Counters metrics = new Counters();

    private ClientCore core(MemoryConnection c) {
        ClientCore core = new ClientCore(metrics, 16, FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH,
                TimeUnit.SECONDS.toNanos(30), 8 << 20, "test", MetadataBlock.DEFAULT_MAX_BYTES, List.of());
        core.attach(c);
        return core;
    }

    /** A response's head (header and an 8-byte payload) announcing an attachment of {@code alen} bytes. */
    private static MemorySegment head(long requestId, int status, int alen) {
        MemorySegment h = Arena.ofAuto().allocate(FrameDescriptor.HEADER_LENGTH + 8);
        new FrameHeaderEncoder().wrap(h, 0).type(FrameDescriptor.TYPE_RESPONSE).requestId(requestId)
                .methodId(GET.id()).status(status).payloadLength(8).attachmentLength(alen);
        h.set(ValueLayout.JAVA_LONG_UNALIGNED, FrameDescriptor.HEADER_LENGTH, 42L);
        return h;
    }

    private static PendingCall start(ClientCore core, Attachment target) {
        return core.start(GET, 1, Attachment.NONE, target, 0, CallKind.EXCHANGE_ASYNC, Metadata.EMPTY);
    }

    @Test
    void aCallWithATargetGetsItsAttachmentThereWithoutACopy() throws Exception {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        MemorySegment target = Arena.ofAuto().allocate(1 << 20);
        PendingCall call = start(core, Attachment.of(target));
        long id = c.lastId();
        int alen = 300_000;
        MemorySegment head = head(id, FrameDescriptor.STATUS_OK, alen);
        MemorySegment sink = core.frameHandler().attachmentSink(c, head, 0);
        assertEquals(target.address(), sink.address(), "the caller's target");
        target.asSlice(0, alen).fill((byte) 7); // what the NIC wrote
        // the buffer holds the head only: reading past it would throw
        core.frameHandler().onFrame(c, head, 0, (int) head.byteSize() + alen, sink.asSlice(0, alen));
        Reply<Long> r = call.<Reply<Long>>future().get(5, TimeUnit.SECONDS);
        assertEquals(42L, r.value());
        assertEquals(target.address(), r.attachment().address());
        assertEquals(alen, r.attachment().length());
    }

    @Test
    void onlySuccessfulResponsesOfLiveCallsWithATargetLargeEnoughGetOne() {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        MemorySegment target = Arena.ofAuto().allocate(4096);
        start(core, Attachment.of(target));
        long withTarget = c.lastId();
        start(core, null);
        long without = c.lastId();
        assertSame(null, core.frameHandler().attachmentSink(c, head(without, FrameDescriptor.STATUS_OK, 100), 0), "no target");
        assertNull(core.frameHandler().attachmentSink(c, head(withTarget, 3, 100), 0), "an error response");
        assertNull(core.frameHandler().attachmentSink(c, head(withTarget, FrameDescriptor.STATUS_OK, 4097), 0), "larger than the target");
        assertNull(core.frameHandler().attachmentSink(c, head(withTarget + 1000, FrameDescriptor.STATUS_OK, 100), 0), "no such call");
        assertEquals(target.address(), core.frameHandler().attachmentSink(c, head(withTarget, FrameDescriptor.STATUS_OK, 4096), 0).address());
    }

    @Test
    void aCallThatEndedBeforeItsResponseNamesNoTargetAndIgnoresTheFrame() {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        MemorySegment target = Arena.ofAuto().allocate(4096);
        PendingCall call = start(core, Attachment.of(target));
        long id = c.lastId();
        MemorySegment head = head(id, FrameDescriptor.STATUS_OK, 4096);
        assertTrue(call.cancel(true));
        assertNull(core.frameHandler().attachmentSink(c, head, 0), "a response of the ended call gets no target");
        core.frameHandler().onFrame(c, head, 0, (int) head.byteSize() + 4096); // read into a pooled buffer instead
        assertTrue(call.isCancelled());
        assertThrows(CancellationException.class, () -> call.future().join());
    }

    @Test
    void aCancelWhileTheResponseIsWrittenIntoTheTargetDoesNotEndTheCallBeforeIt() throws Exception {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        MemorySegment target = Arena.ofAuto().allocate(4096);
        PendingCall call = start(core, Attachment.of(target));
        long id = c.lastId();
        MemorySegment head = head(id, FrameDescriptor.STATUS_OK, 4096);
        MemorySegment sink = core.frameHandler().attachmentSink(c, head, 0); // the NIC starts writing the target
        assertFalse(call.cancel(true), "the target is being written: the call ends with its response");
        assertFalse(call.isDone(), "not ended while the NIC may write the target");
        core.frameHandler().onFrame(c, head, 0, (int) head.byteSize() + 4096, sink); // the read finished
        Reply<Long> r = call.<Reply<Long>>future().get(5, TimeUnit.SECONDS);
        assertEquals(42L, r.value());
        assertEquals(target.address(), r.attachment().address());
        assertEquals(0, metrics.cancelled(), "no cancel was sent");
    }

    @Test
    void theDeadlineDoesNotEndACallWhoseResponseIsBeingWrittenIntoItsTarget() throws Exception {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        MemorySegment target = Arena.ofAuto().allocate(4096);
        PendingCall landing = start(core, Attachment.of(target));
        long id = c.lastId();
        PendingCall other = start(core, Attachment.of(Arena.ofAuto().allocate(4096)));
        MemorySegment head = head(id, FrameDescriptor.STATUS_OK, 4096);
        MemorySegment sink = core.frameHandler().attachmentSink(c, head, 0);
        long late = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // both calls' 30 s passed
        core.frameHandler().onTick(c, late);
        assertThrows(ExecutionException.class, () -> other.future().get(5, TimeUnit.SECONDS), "the other call timed out");
        assertFalse(landing.isDone(), "the call whose target the NIC writes waits for its response");
        core.frameHandler().onTick(c, late + 1);
        assertFalse(landing.isDone());
        core.frameHandler().onFrame(c, head, 0, (int) head.byteSize() + 4096, sink);
        assertEquals(42L, landing.<Reply<Long>>future().get(5, TimeUnit.SECONDS).value());
        assertEquals(1, metrics.timeouts());
    }

    @Test
    void aConnectionThatClosesWhileTheResponseLandsFailsTheCallOnceTheTransportReleasedIt() {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        PendingCall call = start(core, Attachment.of(Arena.ofAuto().allocate(4096)));
        MemorySegment head = head(c.lastId(), FrameDescriptor.STATUS_OK, 4096);
        core.frameHandler().attachmentSink(c, head, 0);
        core.frameHandler().onClose(c, new java.io.IOException("queue pair failed"));
        assertFalse(call.isDone(), "the NIC may still write the target until the transport released the connection");
        core.frameHandler().onReleased(c);
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.future().get(5, TimeUnit.SECONDS));
        assertEquals(Status.CONNECTION_CLOSED, ((RpcException) e.getCause()).status());
    }

    @Test
    void aResponseCopiedIntoTheTargetIsCountedAndACancelledCallsTargetIsNotWritten() throws Exception {
        MemoryConnection c = new MemoryConnection();
        ClientCore core = core(c);
        int alen = 1000;
        MemorySegment target = Arena.ofAuto().allocate(alen);
        PendingCall call = start(core, Attachment.of(target));
        MemorySegment frame = frame(c.lastId(), alen);
        core.frameHandler().onFrame(c, frame, 0, (int) frame.byteSize()); // the attachment came in the frame
        Reply<Long> r = call.<Reply<Long>>future().get(5, TimeUnit.SECONDS);
        assertEquals(target.address(), r.attachment().address());
        assertEquals((byte) 9, target.get(ValueLayout.JAVA_BYTE, alen - 1));
        assertEquals(alen, metrics.responseAttachmentBytesCopied(), "copied into the target, and counted");

        MemorySegment untouched = Arena.ofAuto().allocate(alen);
        PendingCall cancelled = start(core, Attachment.of(untouched));
        MemorySegment late = frame(c.lastId(), alen);
        assertTrue(cancelled.cancel(true));
        core.frameHandler().onFrame(c, late, 0, (int) late.byteSize());
        assertEquals(0, untouched.get(ValueLayout.JAVA_BYTE, alen - 1), "nothing written after the call ended");
        assertEquals(alen, metrics.responseAttachmentBytesCopied());
    }

    /** A whole response frame: {@link #head} and an attachment of {@code alen} bytes of 9. */
    private static MemorySegment frame(long requestId, int alen) {
        MemorySegment h = head(requestId, FrameDescriptor.STATUS_OK, alen);
        MemorySegment f = Arena.ofAuto().allocate(h.byteSize() + alen);
        f.copyFrom(h);
        f.asSlice(h.byteSize()).fill((byte) 9);
        return f;
    }
}
