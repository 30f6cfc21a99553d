package dev.rdmarpc.grpc.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.SimpleRequest;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A received message read in place: its length, a drain, a heap buffer over the one array, detaching. */
class ReceivedMessageTest {
    @Test
    void itReadsDrainsAndLendsItsArray() throws Exception {
        byte[] b = {1, 2, 3, 4, 5};
        ReceivedMessage m = ReceivedMessage.copied(Wire.MESSAGE, b);
        assertEquals(5, m.available());
        assertEquals(1, m.read());
        ByteBuffer bb = m.getByteBuffer();
        assertTrue(bb.hasArray());
        assertSame(b, bb.array(), "the buffer is the message's own array, not a copy");
        assertEquals(4, bb.remaining());
        assertEquals(2, bb.get(0));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(4, m.drainTo(out));
        assertArrayEquals(new byte[] {2, 3, 4, 5}, out.toByteArray());
        assertEquals(-1, m.read());
    }

    @Test
    void detachingMovesTheBytesToTheNewStream() throws Exception {
        ReceivedMessage m = ReceivedMessage.copied(Wire.MESSAGE, new byte[] {7, 8, 9});
        m.skip(1);
        InputStream d = m.detach();
        assertEquals(0, m.available());
        assertEquals(-1, m.read());
        assertArrayEquals(new byte[] {8, 9}, d.readAllBytes());
    }

    /** protobuf's marshaller parses it (through the buffer it lends) to the message that was sent. */
    @Test
    void protobufParsesIt() throws Exception {
        SimpleRequest req = SimpleRequest.newBuilder().setResponseSize(7)
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[1000]))).build();
        MethodDescriptor.Marshaller<SimpleRequest> marshaller = ProtoUtils.marshaller(SimpleRequest.getDefaultInstance());
        SimpleRequest parsed = marshaller.parse(ReceivedMessage.copied(Wire.MESSAGE, req.toByteArray()));
        assertEquals(req, parsed);
    }

    /** A message held in a (native) receive buffer: read in place, its hold released once, on close. */
    @Test
    void aHeldMessageIsReadInPlaceAndReleasedOnceOnClose() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(16);
            for (int i = 0; i < 16; i++) {
                buffer.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            AtomicInteger released = new AtomicInteger();
            long copies = dev.rdmarpc.grpc.MessageCopies.receiveCopies();
            ReceivedMessage m = ReceivedMessage.held(Wire.MESSAGE, buffer, 4, 8, released::incrementAndGet);
            assertTrue(m.isHeld());
            assertEquals(8, m.available());
            assertEquals(4, m.read());
            byte[] rest = new byte[10];
            assertEquals(7, m.read(rest, 0, 10));
            assertArrayEquals(new byte[] {5, 6, 7, 8, 9, 10, 11}, java.util.Arrays.copyOf(rest, 7));
            assertEquals(0, released.get(), "kept until closed");
            m.close();
            m.close();
            m.release();
            assertEquals(1, released.get(), "released exactly once");
            assertEquals(-1, m.read());
            assertEquals(copies, dev.rdmarpc.grpc.MessageCopies.receiveCopies(), "read in place: no copy");
        }
    }

    /** Detaching a held message gives a stream that owns a copy (counted); the receive buffer goes back at once. */
    @Test
    void detachingAHeldMessageCopiesItOnceAndReleasesTheBuffer() throws Exception {
        Arena arena = Arena.ofConfined();
        MemorySegment buffer = arena.allocate(4);
        buffer.set(ValueLayout.JAVA_BYTE, 1, (byte) 42);
        AtomicInteger released = new AtomicInteger();
        long copies = dev.rdmarpc.grpc.MessageCopies.receiveCopies();
        ReceivedMessage m = ReceivedMessage.held(Wire.MESSAGE, buffer, 0, 4, released::incrementAndGet);
        m.skip(1);
        InputStream d = m.detach();
        assertEquals(1, released.get());
        assertEquals(1, dev.rdmarpc.grpc.MessageCopies.receiveCopies() - copies, "the detach's copy is counted");
        assertEquals(0, m.available());
        arena.close(); // the receive buffer is gone: the detached stream does not need it
        assertArrayEquals(new byte[] {42, 0, 0}, d.readAllBytes());
        m.close();
        assertEquals(1, released.get());
    }

    /** protobuf's marshaller parses a message held in a native buffer, and gRPC's close releases it. */
    @Test
    void protobufParsesAHeldMessage() throws Exception {
        SimpleRequest req = SimpleRequest.newBuilder().setResponseSize(3)
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[300]))).build();
        byte[] wire = req.toByteArray();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(wire.length + 8);
            MemorySegment.copy(wire, 0, buffer, ValueLayout.JAVA_BYTE, 8, wire.length);
            AtomicInteger released = new AtomicInteger();
            ReceivedMessage m = ReceivedMessage.held(Wire.MESSAGE, buffer, 8, wire.length, released::incrementAndGet);
            MethodDescriptor.Marshaller<SimpleRequest> marshaller = ProtoUtils.marshaller(SimpleRequest.getDefaultInstance());
            assertEquals(req, marshaller.parse(m));
            m.close();
            assertEquals(1, released.get());
        }
    }
}
